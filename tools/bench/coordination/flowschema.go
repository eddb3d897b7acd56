package main

import (
	"github.com/fastjobset/jobset/tools/testing/framework"
)

// agentFlowName names the agents' priority level and flow schema, as
// agent/rbac/agents-flowcontrol.yaml ships them (-agent-flow-schema).
const agentFlowName = "jobset-agents"

// installAgentFlowSchema applies the install's priority level and flow
// schema for the agents (agent/rbac/agents-flowcontrol.yaml): their
// watches of JobSets and patches of Pods queue in a level of their own,
// one flow per namespace, instead of sharing workload-low's 6 queues of 50
// as one flow (every agent of a namespace is one user), where a group
// restart of thousands is answered 429.
func installAgentFlowSchema(env *framework.Environment) error {
	root, err := framework.RepoRoot()
	if err != nil {
		return err
	}
	_, err = env.Kubectl("apply", "--server-side", "-f", root+"/agent/rbac/agents-flowcontrol.yaml")
	return err
}
