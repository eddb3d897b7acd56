package main

import (
	"context"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fastjobset/jobset/api/jobset/agentspec"
)

// agentFlowName names the priority level and flow schema of -agent-flow-schema.
const agentFlowName = "jobset-agents"

// installAgentFlowSchema gives the agents of namespace ns (its
// jobset-agent ServiceAccount: a flow schema cannot name a ServiceAccount
// in every namespace) a priority level of their own, which
// queues their requests in one long queue instead of rejecting them.
//
// By default API Priority and Fairness puts every ServiceAccount in the
// flow schema service-accounts (priority level workload-low), with one
// flow per user: all the agents of a namespace are one user, so one flow,
// shuffle-sharded onto 6 queues of 50 requests. A group restart's burst of
// thousands of agents fills them, and the API server answers 429 to the
// rest, which retry after their backoff.
func installAgentFlowSchema(ctx context.Context, c client.Client, ns string) error {
	level := &flowcontrolv1.PriorityLevelConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: agentFlowName},
		Spec: flowcontrolv1.PriorityLevelConfigurationSpec{
			Type: flowcontrolv1.PriorityLevelEnablementLimited,
			Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{
				NominalConcurrencyShares: ptr.To[int32](100),
				LimitResponse: flowcontrolv1.LimitResponse{
					Type: flowcontrolv1.LimitResponseTypeQueue,
					Queuing: &flowcontrolv1.QueuingConfiguration{
						Queues: 1, HandSize: 1, QueueLengthLimit: 20000,
					},
				},
			},
		},
	}
	schema := &flowcontrolv1.FlowSchema{
		ObjectMeta: metav1.ObjectMeta{Name: agentFlowName + "-" + ns},
		Spec: flowcontrolv1.FlowSchemaSpec{
			PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: agentFlowName},
			// Before service-accounts (9000).
			MatchingPrecedence:  1000,
			DistinguisherMethod: &flowcontrolv1.FlowDistinguisherMethod{Type: flowcontrolv1.FlowDistinguisherMethodByUserType},
			Rules: []flowcontrolv1.PolicyRulesWithSubjects{{
				Subjects: []flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindServiceAccount,
					ServiceAccount: &flowcontrolv1.ServiceAccountSubject{Namespace: ns, Name: agentspec.ServiceAccountName}}},
				ResourceRules: []flowcontrolv1.ResourcePolicyRule{{
					Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}, Namespaces: []string{"*"}}},
			}},
		},
	}
	for _, o := range []client.Object{level, schema} {
		if err := c.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	return nil
}
