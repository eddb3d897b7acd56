package main

import (
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fastjobset/jobset/api/jobset/agentspec"
)

// AgentsFlowName names the agents' priority level and flow schema;
// ControllerFlowName the controller's flow schema.
const (
	AgentsFlowName     = "jobset-agents"
	ControllerFlowName = "jobset-controller"
)

// AgentsQueueLengthLimit is how many agent requests the agents' priority
// level queues: each agent has one request outstanding at most, so this is
// the most agents that can restart at once without a 429.
const AgentsQueueLengthLimit = 10000

// Precedences of the two flow schemas: after the built-in schemas of the
// control plane (kube-system-service-accounts is 900) and before
// service-accounts (9000), where every ServiceAccount goes by default.
const (
	controllerFlowPrecedence = 7000
	agentsFlowPrecedence     = 8000
)

// agentsFlowControl gives the agents' requests a priority level of their
// own that queues them instead of rejecting them.
//
// By default API Priority and Fairness puts every ServiceAccount in the
// flow schema service-accounts (priority level workload-low), one flow per
// user. All the agents of a namespace are one user, so one flow,
// shuffle-sharded onto 6 queues of 50: when thousands of agents restart at
// once, the API server answers most of them 429, and they come back after
// a backoff that grows to 30 s.
//
// A flow schema's ServiceAccount subject must name a namespace, and the
// agents run in any namespace a user names; so the schema matches every
// ServiceAccount, narrowed to the two requests an agent makes: a watch of
// JobSets and a patch of a Pod. Another ServiceAccount that makes these
// (Kueue patching Pods, say) shares the level, and is queued as the
// agents are. Each namespace is its own flow (ByNamespace): one team's
// group restart does not hold another's back for more than its fair share.
//
// Sizing (docs/operations.md): a queued request gives up after a quarter
// of its deadline (15 s of the default 60 s), so the level must serve the
// largest burst within that: N agents of 2 requests each at a few
// milliseconds a request need few seats, and the level's shares give it a
// workload-low's worth, which it may exceed by borrowing idle seats.
func agentsFlowControl() []client.Object {
	return []client.Object{
		&flowcontrolv1.PriorityLevelConfiguration{
			TypeMeta:   metav1.TypeMeta{APIVersion: flowcontrolv1.SchemeGroupVersion.String(), Kind: "PriorityLevelConfiguration"},
			ObjectMeta: metav1.ObjectMeta{Name: AgentsFlowName},
			Spec: flowcontrolv1.PriorityLevelConfigurationSpec{
				Type: flowcontrolv1.PriorityLevelEnablementLimited,
				Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{
					NominalConcurrencyShares: ptr.To[int32](100),
					LimitResponse: flowcontrolv1.LimitResponse{
						Type: flowcontrolv1.LimitResponseTypeQueue,
						Queuing: &flowcontrolv1.QueuingConfiguration{
							Queues: 16, HandSize: 1, QueueLengthLimit: AgentsQueueLengthLimit,
						},
					},
				},
			},
		},
		&flowcontrolv1.FlowSchema{
			TypeMeta:   metav1.TypeMeta{APIVersion: flowcontrolv1.SchemeGroupVersion.String(), Kind: "FlowSchema"},
			ObjectMeta: metav1.ObjectMeta{Name: AgentsFlowName},
			Spec: flowcontrolv1.FlowSchemaSpec{
				PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: AgentsFlowName},
				MatchingPrecedence:         agentsFlowPrecedence,
				DistinguisherMethod:        &flowcontrolv1.FlowDistinguisherMethod{Type: flowcontrolv1.FlowDistinguisherMethodByNamespaceType},
				Rules: []flowcontrolv1.PolicyRulesWithSubjects{{
					Subjects: []flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindGroup,
						Group: &flowcontrolv1.GroupSubject{Name: "system:serviceaccounts"}}},
					ResourceRules: []flowcontrolv1.ResourcePolicyRule{
						{Verbs: []string{"watch"}, APIGroups: []string{agentspec.Group}, Resources: []string{agentspec.Resource}, Namespaces: []string{flowcontrolv1.NamespaceEvery}},
						{Verbs: []string{"patch"}, APIGroups: []string{""}, Resources: []string{"pods"}, Namespaces: []string{flowcontrolv1.NamespaceEvery}},
					},
				}},
			},
		},
	}
}

// controllerFlowSchema keeps the controller out of the agents' level: its
// own watches of JobSets and patches of Pods would match that schema, and
// would wait behind a group restart's agents. It goes to workload-high, as
// the control plane's own controllers do, before the agents' schema.
func controllerFlowSchema() client.Object {
	return &flowcontrolv1.FlowSchema{
		TypeMeta:   metav1.TypeMeta{APIVersion: flowcontrolv1.SchemeGroupVersion.String(), Kind: "FlowSchema"},
		ObjectMeta: metav1.ObjectMeta{Name: ControllerFlowName, Labels: partOf(ControllerName)},
		Spec: flowcontrolv1.FlowSchemaSpec{
			PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "workload-high"},
			MatchingPrecedence:         controllerFlowPrecedence,
			DistinguisherMethod:        &flowcontrolv1.FlowDistinguisherMethod{Type: flowcontrolv1.FlowDistinguisherMethodByUserType},
			Rules: []flowcontrolv1.PolicyRulesWithSubjects{{
				Subjects: []flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindServiceAccount,
					ServiceAccount: &flowcontrolv1.ServiceAccountSubject{Namespace: SystemNamespace, Name: ControllerName}}},
				ResourceRules: []flowcontrolv1.ResourcePolicyRule{{Verbs: []string{flowcontrolv1.VerbAll},
					APIGroups: []string{flowcontrolv1.APIGroupAll}, Resources: []string{flowcontrolv1.ResourceAll},
					ClusterScope: true, Namespaces: []string{flowcontrolv1.NamespaceEvery}}},
				NonResourceRules: []flowcontrolv1.NonResourcePolicyRule{{Verbs: []string{flowcontrolv1.VerbAll},
					NonResourceURLs: []string{flowcontrolv1.NonResourceAll}}},
			}},
		},
	}
}
