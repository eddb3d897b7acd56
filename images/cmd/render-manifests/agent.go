package main

import (
	"strconv"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fastjobset/jobset/api/jobset/agentspec"
)

// AgentName names the agent's ServiceAccount, Role and RoleBinding; the
// epoch-only policy recognises agents by this ServiceAccount name.
const AgentName = agentspec.ServiceAccountName

// EpochOnlyPolicyName names the ValidatingAdmissionPolicy and its binding.
const EpochOnlyPolicyName = "jobset-agent-epoch-only"

// agentRBAC is what the agent needs in a namespace that runs InPlaceRestart
// JobSets, and nothing more: one watch on its JobSet (watch; the agent
// never gets or lists, its watch starts with the current state) and a
// patch of its own Pod's epoch annotation (agent/agent.go), which the
// epoch-only policy narrows to that.
//
// No object names a namespace, so that one manifest serves every namespace:
// `kubectl apply -n team-a -f agent-rbac.yaml` (or kustomize's namespace)
// puts all three in team-a. The RoleBinding's subject leaves its namespace
// out too: RBAC validation allows that for a ServiceAccount subject of a
// RoleBinding (not of a ClusterRoleBinding), and the authorizer then takes
// the RoleBinding's own namespace. It binds team-a's jobset-agent and no
// other, exactly as `namespace: team-a` would, with nothing to rewrite.
func agentRBAC() []client.Object {
	meta := metav1.ObjectMeta{Name: AgentName}
	return []client.Object{
		&corev1.ServiceAccount{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"},
			ObjectMeta: meta,
		},
		&rbacv1.Role{
			TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "Role"},
			ObjectMeta: meta,
			Rules: []rbacv1.PolicyRule{
				{APIGroups: []string{agentspec.Group}, Resources: []string{agentspec.Resource}, Verbs: []string{"watch"}},
				{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"patch"}},
			},
		},
		&rbacv1.RoleBinding{
			TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "RoleBinding"},
			ObjectMeta: meta,
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: AgentName}},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: AgentName},
		},
	}
}

// Keys of the user info the API server gives a ServiceAccount token bound
// to a Pod (a projected serviceAccountToken volume, or a TokenRequest with
// boundObjectRef kind Pod): the Pod's name and UID.
const (
	boundPodNameKey = "authentication.kubernetes.io/pod-name"
	boundPodUIDKey  = "authentication.kubernetes.io/pod-uid"
)

// The rules of the epoch-only policy, each named in its denial message.
const (
	RuleNoSubresource   = "no-subresource"
	RuleNoCreate        = "no-create"
	RuleNoDelete        = "no-delete"
	RuleOwnPod          = "own-pod"
	RuleLivePod         = "live-pod"
	RuleEpochOnly       = "epoch-only"
	RuleEpochValue      = "epoch-value"
	RuleEpochNoLower    = "epoch-not-lower"
	RuleEpochAtMostNext = "epoch-at-most-next"
	RuleStoppedValue    = "worker-stopped-value"
	RuleFencedValue     = "fenced-value"
	RuleHungValue       = "hung-value"
	RuleRestartsValue   = "worker-restarts-value"
)

// epochOnlyPolicy limits what a ServiceAccount named jobset-agent, in any
// namespace, may do to Pods (KEP-467, "Permissions for the agent sidecar";
// the Role must grant patch on Pods, and this is what narrows it). Any
// broader grant (a RoleBinding to every ServiceAccount of the namespace,
// the group system:serviceaccounts:<ns>, is common) is narrowed the same:
//
//   - no-subresource: no Pod subresource at all (status,
//     ephemeralcontainers, resize, eviction, binding, exec, attach,
//     portforward, proxy, and any added later), nor the legacy bindings
//     resource: the agent writes one annotation of its Pod, which is the
//     Pod itself. Reads (get, list, watch, log) pass no admission, so
//     only RBAC can refuse them;
//   - no-create, no-delete: never create or delete a Pod, even if another
//     Role granted it;
//   - own-pod: only the Pod its token is bound to (the bound token's user
//     info names the Pod and its UID; a token bound to no Pod touches none),
//     so one agent cannot start a group restart in another JobSet, nor
//     stall its neighbours' gather;
//   - live-pod: not once the Pod has ended or is being deleted, even
//     the epoch it shows: the controller marks Failed and deletes a Pod
//     whose node it found lost, and its Job replaces it, but the Pod's
//     containers run on until the kubelet hears of it. Its agent, left
//     without an epoch by its fence, must not join one when the node
//     comes back: it would lift its barrier beside its replacement. The
//     one write such a Pod takes is the confirmation that its worker
//     stopped, alone, the epoch untouched: the controller waits for it
//     when the Pod's kubelet may be down;
//   - epoch-only: nothing on it but the epoch annotation, the
//     worker-stopped one, the fenced one, the hung one and the
//     worker-restarts one;
//   - fenced-value: the record that the agent fenced (stopped its worker
//     out of contact with the API server) comes only with a join of the
//     epoch after the one the Pod shows, and names the epoch the Pod
//     shows: the controller counts a group restart that nothing but such
//     records caused against no budget, so a record may not be written
//     ahead of a failure, nor name another epoch, nor be taken back;
//   - hung-value: the record that the agent stopped its worker for
//     making no progress, by the same rule as the fenced one: only with
//     a join of the next epoch, naming the epoch the Pod shows, never
//     taken back. It changes only the reason the controller gives the
//     group restart, which the join starts anyway;
//   - worker-stopped-value: the confirmation names the epoch the Pod
//     shows, and once given is not taken back;
//   - worker-restarts-value: the report of the Pod's worker restarts is
//     a value of agentspec.ParseWorkerRestarts's grammar that names the
//     epoch the Pod shows after the write (an agent writes it with its
//     join), and once given is not taken back. The controller only counts
//     it in its events and metrics;
//   - epoch-value: to a canonical decimal integer in 1..2147483647, the
//     only values an agent writes;
//   - epoch-not-lower and epoch-at-most-next: where the Pod has a valid
//     epoch e, only to e or e + 1. An agent joins S + 1, S the synced
//     epoch it reads, and S <= e: the controller syncs an epoch only when
//     every live Pod shows it, so each sync left this Pod at S, and S
//     moves only by syncs. So an agent writes e (it restarted while its
//     group gathers at e) or e + 1 (its group restarts from e). A larger
//     step is never the agent's: a Pod above S + 1 is ignored for sync,
//     and since its agent may not lower it again, its group could never
//     sync while the Pod lives. One write of 2147483647 did that; now each
//     write moves the epoch by one at most (see docs/security.md for what
//     two writes still do).
//
// Other identities are not affected (matchConditions). Each rule is its
// own validation, so that a denial names the rule ("ValidatingAdmissionPolicy
// 'jobset-agent-epoch-only' with binding ... denied request: rule own-pod:
// ..."); the first that fails is reported.
func epochOnlyPolicy() []client.Object {
	// The grammar of agentspec.ParseEpoch: its pattern, then its bound.
	canonicalEpoch, maxEpoch := agentspec.EpochPattern, strconv.Itoa(agentspec.MaxEpoch)
	agent := "the " + AgentName + " ServiceAccount"
	quoted := func(v string) string { return "'" + v + "'" }
	// podUpdate guards the rules about an update of the Pod itself, the
	// only request the earlier rules let through: they read object and
	// oldObject as Pods, which a create, a delete (object is null) or a
	// connect (object is its options) does not have.
	podUpdate := func(expr string) string { return "!variables.isPodUpdate || (" + expr + ")" }
	validEpoch := func(v string) string {
		return v + ".matches('" + canonicalEpoch + "') && int(" + v + ") <= " + maxEpoch
	}
	rule := func(name, expr, message, messageExpr string) admissionregistrationv1.Validation {
		v := admissionregistrationv1.Validation{
			Expression: expr,
			Message:    "rule " + name + ": " + message,
			Reason:     ptr.To(metav1.StatusReasonForbidden),
		}
		if messageExpr != "" {
			v.MessageExpression = quoted("rule "+name+": ") + " + " + messageExpr
		}
		return v
	}
	// joinRecord is the rule of an annotation that records why an agent
	// left its epoch (a fence, a hang): written only with its join of the
	// epoch after the one the Pod shows, naming that epoch, never removed.
	// variable is the prefix of the record's variables (key, changed).
	joinRecord := func(name, annotation, variable string) admissionregistrationv1.Validation {
		key := "variables." + variable + "Key"
		return rule(name,
			podUpdate("!variables."+variable+"Changed || ("+key+" in variables.newAnnotations && variables.newAnnotations["+key+"] == variables.oldEpoch && variables.epochBounded && int(variables.newEpoch) == int(variables.oldEpoch) + 1)"),
			"the Pod annotation "+annotation+" comes only with a join of the epoch after the one the Pod shows, names the epoch the Pod shows, and may not be removed",
			"'the Pod annotation "+annotation+" comes only with a join of the epoch after the one the Pod shows, and names the epoch the Pod shows (' + "+
				"(variables.oldEpoch == '' ? 'none' : variables.oldEpoch) + '), not ' + "+
				"("+key+" in variables.newAnnotations ? '\"' + variables.newAnnotations["+key+"] + '\"' : 'removed') + "+
				"' with epoch ' + (variables.newEpoch == '' ? 'none' : variables.newEpoch)")
	}
	// ownKey holds for the annotations the agent writes.
	ownKey := "k == variables.epochKey || k == variables.stoppedKey || k == variables.fencedKey || k == variables.hungKey || k == variables.restartsKey"
	return []client.Object{
		&admissionregistrationv1.ValidatingAdmissionPolicy{
			TypeMeta:   metav1.TypeMeta{APIVersion: admissionregistrationv1.SchemeGroupVersion.String(), Kind: "ValidatingAdmissionPolicy"},
			ObjectMeta: metav1.ObjectMeta{Name: EpochOnlyPolicyName},
			Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
				FailurePolicy: ptr.To(admissionregistrationv1.Fail),
				MatchConstraints: &admissionregistrationv1.MatchResources{
					ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
						RuleWithOperations: admissionregistrationv1.RuleWithOperations{
							// Every operation admission sees.
							Operations: []admissionregistrationv1.OperationType{
								admissionregistrationv1.Create, admissionregistrationv1.Update,
								admissionregistrationv1.Delete, admissionregistrationv1.Connect,
							},
							// "pods" is the Pod alone, "pods/*" every subresource
							// of it, and bindings the legacy pods/binding.
							Rule: admissionregistrationv1.Rule{
								APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods", "pods/*", "bindings"},
							},
						},
					}},
				},
				MatchConditions: []admissionregistrationv1.MatchCondition{{
					Name: "is-jobset-agent",
					Expression: "request.userInfo.username.startsWith('system:serviceaccount:') && " +
						"request.userInfo.username.endsWith(':" + AgentName + "')",
				}},
				Variables: []admissionregistrationv1.Variable{
					// request.subResource is absent, not empty, for the resource itself.
					{Name: "subresource", Expression: "has(request.subResource) ? request.subResource : ''"},
					{Name: "isPodUpdate", Expression: "request.resource.resource == 'pods' && variables.subresource == '' && request.operation == 'UPDATE'"},
					{Name: "boundPodName", Expression: boundExtra(boundPodNameKey)},
					{Name: "boundPodUID", Expression: boundExtra(boundPodUIDKey)},
					{Name: "epochKey", Expression: quoted(agentspec.EpochAnnotation)},
					{Name: "oldAnnotations", Expression: "has(oldObject.metadata.annotations) ? oldObject.metadata.annotations : {}"},
					{Name: "newAnnotations", Expression: "has(object.metadata.annotations) ? object.metadata.annotations : {}"},
					{Name: "oldEpoch", Expression: "variables.epochKey in variables.oldAnnotations ? variables.oldAnnotations[variables.epochKey] : ''"},
					{Name: "newEpoch", Expression: "variables.epochKey in variables.newAnnotations ? variables.newAnnotations[variables.epochKey] : ''"},
					{Name: "epochChanged", Expression: "(variables.epochKey in variables.oldAnnotations) != (variables.epochKey in variables.newAnnotations) || variables.oldEpoch != variables.newEpoch"},
					{Name: "newEpochValid", Expression: validEpoch("variables.newEpoch")},
					// An old value that is not a valid epoch (only another
					// identity can have written it) bounds nothing.
					{Name: "oldEpochValid", Expression: validEpoch("variables.oldEpoch")},
					// Both bounds apply to a valid new value replacing a
					// valid old one.
					{Name: "epochBounded", Expression: "variables.epochChanged && variables.newEpochValid && variables.oldEpochValid"},
					{Name: "stoppedKey", Expression: quoted(agentspec.WorkerStoppedAnnotation)},
					{Name: "stoppedChanged", Expression: "(variables.stoppedKey in variables.oldAnnotations) != (variables.stoppedKey in variables.newAnnotations) || " +
						"(variables.stoppedKey in variables.oldAnnotations && variables.oldAnnotations[variables.stoppedKey] != variables.newAnnotations[variables.stoppedKey])"},
					// A confirmation alone: what a Pod that ended or is being
					// deleted still takes.
					{Name: "fencedKey", Expression: quoted(agentspec.FencedAnnotation)},
					{Name: "fencedChanged", Expression: "(variables.fencedKey in variables.oldAnnotations) != (variables.fencedKey in variables.newAnnotations) || " +
						"(variables.fencedKey in variables.oldAnnotations && variables.oldAnnotations[variables.fencedKey] != variables.newAnnotations[variables.fencedKey])"},
					{Name: "hungKey", Expression: quoted(agentspec.HungAnnotation)},
					{Name: "hungChanged", Expression: "(variables.hungKey in variables.oldAnnotations) != (variables.hungKey in variables.newAnnotations) || " +
						"(variables.hungKey in variables.oldAnnotations && variables.oldAnnotations[variables.hungKey] != variables.newAnnotations[variables.hungKey])"},
					{Name: "restartsKey", Expression: quoted(agentspec.WorkerRestartsAnnotation)},
					{Name: "restartsChanged", Expression: "(variables.restartsKey in variables.oldAnnotations) != (variables.restartsKey in variables.newAnnotations) || " +
						"(variables.restartsKey in variables.oldAnnotations && variables.oldAnnotations[variables.restartsKey] != variables.newAnnotations[variables.restartsKey])"},
					{Name: "onlyStopped", Expression: "variables.stoppedChanged && !variables.epochChanged && !variables.fencedChanged && !variables.hungChanged && !variables.restartsChanged"},
				},
				Validations: []admissionregistrationv1.Validation{
					rule(RuleNoSubresource, "request.resource.resource == 'pods' && variables.subresource == ''",
						agent+" may not use a Pod subresource, only patch its Pod",
						"'"+agent+" may not use ' + request.resource.resource + (variables.subresource == '' ? '' : '/' + variables.subresource) + ', only patch its Pod'"),
					rule(RuleNoCreate, "request.operation != 'CREATE'",
						agent+" may not create Pods", ""),
					rule(RuleNoDelete, "request.operation != 'DELETE'",
						agent+" may not delete Pods", ""),
					rule(RuleOwnPod,
						podUpdate("variables.boundPodName == [oldObject.metadata.name] && variables.boundPodUID == [string(oldObject.metadata.uid)]"),
						agent+" may change only the Pod its token is bound to",
						"'"+agent+" may change only the Pod its token is bound to (' + "+
							"(size(variables.boundPodName) == 1 ? 'this token is bound to Pod ' + variables.boundPodName[0] : 'this token is bound to no Pod') + "+
							"'), not Pod ' + oldObject.metadata.name + ' (uid ' + string(oldObject.metadata.uid) + ')'"),
					rule(RuleLivePod,
						podUpdate("variables.onlyStopped || !has(oldObject.metadata.deletionTimestamp) && !(has(oldObject.status) && has(oldObject.status.phase) && oldObject.status.phase in ['Succeeded', 'Failed'])"),
						agent+" may not write an epoch to a Pod that has ended or is being deleted (its Job replaces it)",
						"'"+agent+" may not write an epoch to Pod ' + oldObject.metadata.name + ', which ' + "+
							"(has(oldObject.metadata.deletionTimestamp) ? 'is being deleted' : 'has ended ' + oldObject.status.phase) + ' (its Job replaces it)'"),
					rule(RuleEpochOnly,
						podUpdate("object.spec == oldObject.spec"+
							" && "+unchanged("labels", "{}")+
							" && "+unchanged("finalizers", "[]")+
							" && "+unchanged("ownerReferences", "[]")+
							" && variables.oldAnnotations.all(k, "+ownKey+" || (k in variables.newAnnotations && variables.newAnnotations[k] == variables.oldAnnotations[k]))"+
							" && variables.newAnnotations.all(k, "+ownKey+" || (k in variables.oldAnnotations && variables.oldAnnotations[k] == variables.newAnnotations[k]))"),
						agent+" may change only the Pod annotations "+agentspec.EpochAnnotation+", "+agentspec.WorkerStoppedAnnotation+", "+agentspec.FencedAnnotation+", "+
							agentspec.HungAnnotation+" and "+agentspec.WorkerRestartsAnnotation+" (no label, other annotation, finalizer, owner reference or spec field)", ""),
					rule(RuleEpochValue,
						podUpdate("!variables.epochChanged || variables.newEpochValid"),
						"the Pod annotation "+agentspec.EpochAnnotation+" must be a decimal integer from 1 to "+maxEpoch+" without leading zeros",
						"'the Pod annotation "+agentspec.EpochAnnotation+" must be a decimal integer from 1 to "+maxEpoch+" without leading zeros, not ' + "+
							"(variables.epochKey in variables.newAnnotations ? '\"' + variables.newEpoch + '\"' : 'removed')"),
					rule(RuleEpochNoLower,
						podUpdate("!variables.epochBounded || int(variables.newEpoch) >= int(variables.oldEpoch)"),
						"the Pod annotation "+agentspec.EpochAnnotation+" may not decrease",
						"'the Pod annotation "+agentspec.EpochAnnotation+" may not decrease, from ' + variables.oldEpoch + ' to ' + variables.newEpoch"),
					rule(RuleEpochAtMostNext,
						podUpdate("!variables.epochBounded || int(variables.newEpoch) <= int(variables.oldEpoch) + 1"),
						"the Pod annotation "+agentspec.EpochAnnotation+" may rise by one at most (an agent joins the epoch after the synced one, and its Pod shows that or the synced one)",
						"'the Pod annotation "+agentspec.EpochAnnotation+" may rise by one at most, from ' + variables.oldEpoch + ' to ' + string(int(variables.oldEpoch) + 1) + ', not to ' + variables.newEpoch"),
					rule(RuleStoppedValue,
						podUpdate("!variables.stoppedChanged || (variables.stoppedKey in variables.newAnnotations && variables.newAnnotations[variables.stoppedKey] == variables.newEpoch && variables.newEpochValid)"),
						"the Pod annotation "+agentspec.WorkerStoppedAnnotation+" must name the epoch the Pod shows, and may not be removed",
						"'the Pod annotation "+agentspec.WorkerStoppedAnnotation+" must name the epoch the Pod shows (' + "+
							"(variables.newEpoch == '' ? 'none' : variables.newEpoch) + '), not ' + "+
							"(variables.stoppedKey in variables.newAnnotations ? '\"' + variables.newAnnotations[variables.stoppedKey] + '\"' : 'removed')"),
					joinRecord(RuleFencedValue, agentspec.FencedAnnotation, "fenced"),
					joinRecord(RuleHungValue, agentspec.HungAnnotation, "hung"),
					rule(RuleRestartsValue,
						podUpdate("!variables.restartsChanged || (variables.restartsKey in variables.newAnnotations && variables.newEpochValid"+
							" && variables.newAnnotations[variables.restartsKey].matches('"+agentspec.WorkerRestartsPattern+"')"+
							" && variables.newAnnotations[variables.restartsKey].contains(',epoch=' + variables.newEpoch + ','))"),
						"the Pod annotation "+agentspec.WorkerRestartsAnnotation+" must read \"process=<n>,pod=<n>,epoch=<e>,tier=<process|pod|new>\", n from 0 to "+
							strconv.Itoa(agentspec.MaxWorkerRestarts)+" and e the epoch the Pod shows, and may not be removed",
						"'the Pod annotation "+agentspec.WorkerRestartsAnnotation+" must read \"process=<n>,pod=<n>,epoch=<e>,tier=<process|pod|new>\", n from 0 to "+
							strconv.Itoa(agentspec.MaxWorkerRestarts)+" and e the epoch the Pod shows (' + "+
							"(variables.newEpoch == '' ? 'none' : variables.newEpoch) + '), not ' + "+
							"(variables.restartsKey in variables.newAnnotations ? '\"' + variables.newAnnotations[variables.restartsKey] + '\"' : 'removed')"),
				},
			},
		},
		&admissionregistrationv1.ValidatingAdmissionPolicyBinding{
			TypeMeta:   metav1.TypeMeta{APIVersion: admissionregistrationv1.SchemeGroupVersion.String(), Kind: "ValidatingAdmissionPolicyBinding"},
			ObjectMeta: metav1.ObjectMeta{Name: EpochOnlyPolicyName},
			Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
				PolicyName:        EpochOnlyPolicyName,
				ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
			},
		},
	}
}

// boundExtra is a CEL expression for the values of the requester's user
// info extra key, an empty list when it has none.
func boundExtra(key string) string {
	return "has(request.userInfo.extra) && '" + key + "' in request.userInfo.extra ? request.userInfo.extra['" + key + "'] : []"
}

// unchanged is a CEL expression that holds when the Pod's metadata field is
// the same before and after, an absent field counting as empty.
func unchanged(field, empty string) string {
	return "(has(object.metadata." + field + ") ? object.metadata." + field + " : " + empty + ")" +
		" == (has(oldObject.metadata." + field + ") ? oldObject.metadata." + field + " : " + empty + ")"
}
