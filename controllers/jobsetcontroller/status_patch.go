package jobsetcontroller

import (
	"encoding/json"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
)

// statusPatch is the merge patch of a status write, guarded by the
// resourceVersion the reconcile read, that also carries every status field
// community JobSet always stores. Community updates the whole status, so
// its stored JobSets hold `restarts: 0` from their first status on; a
// merge patch leaves out what did not change, and a JobSet that never
// restarted fully would store no `restarts` at all, on which a client's
// `kubectl wait --for=jsonpath='{.status.restarts}'=0` waits forever.
func statusPatch(original *jobset.JobSet) client.Patch {
	return withStoredFields{client.MergeFromWithOptions(original, client.MergeFromWithOptimisticLock{})}
}

type withStoredFields struct{ client.Patch }

func (p withStoredFields) Data(obj client.Object) ([]byte, error) {
	data, err := p.Patch.Data(obj)
	if err != nil {
		return nil, err
	}
	js, ok := obj.(*jobset.JobSet)
	if !ok {
		return nil, fmt.Errorf("status patch of a %T, not a JobSet", obj)
	}
	var patch map[string]any
	if err := json.Unmarshal(data, &patch); err != nil {
		return nil, err
	}
	status, _ := patch["status"].(map[string]any)
	if status == nil {
		status = map[string]any{}
		patch["status"] = status
	}
	status["restarts"] = js.Status.Restarts
	return json.Marshal(patch)
}
