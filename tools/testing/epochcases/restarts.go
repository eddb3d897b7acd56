package epochcases

import (
	"strconv"

	"github.com/fastjobset/jobset/api/jobset/agentspec"
)

// RestartsEpoch is the epoch every valid WorkerRestartsCases value names:
// the admission policy admits a value only with a join of the epoch it
// names, so its test writes each case with a join of RestartsEpoch.
const RestartsEpoch = 7

// RestartsCase is one value of the worker-restarts annotation and whether
// it is valid.
type RestartsCase struct {
	Value string
	Valid bool
	// Restarts is the value read, when Valid.
	Restarts agentspec.WorkerRestarts
}

// WorkerRestartsCases covers the grammar of agentspec.ParseWorkerRestarts:
// each tier, the largest counts, and each way a value can be out of it.
var WorkerRestartsCases = []RestartsCase{
	{Value: "process=0,pod=0,epoch=7,tier=new", Valid: true, Restarts: agentspec.WorkerRestarts{Epoch: 7, Tier: agentspec.TierNew}},
	{Value: "process=3,pod=1,epoch=7,tier=process", Valid: true, Restarts: agentspec.WorkerRestarts{Process: 3, Pod: 1, Epoch: 7, Tier: agentspec.TierProcess}},
	{Value: "process=0,pod=12,epoch=7,tier=pod", Valid: true, Restarts: agentspec.WorkerRestarts{Pod: 12, Epoch: 7, Tier: agentspec.TierPod}},
	{Value: "process=999999999,pod=999999999,epoch=7,tier=process", Valid: true,
		Restarts: agentspec.WorkerRestarts{Process: 999999999, Pod: 999999999, Epoch: 7, Tier: agentspec.TierProcess}},
	{Value: ""},
	{Value: "process=3,pod=1,epoch=7"},
	{Value: "process=3,pod=1,epoch=7,tier=container"},
	{Value: "process=3,pod=1,epoch=7,tier=Process"},
	{Value: "pod=1,process=3,epoch=7,tier=process"},
	{Value: "process=3, pod=1, epoch=7, tier=process"},
	{Value: "process=3,pod=1,epoch=7,tier=process,"},
	{Value: " process=3,pod=1,epoch=7,tier=process"},
	{Value: "process=03,pod=1,epoch=7,tier=process"},
	{Value: "process=-1,pod=1,epoch=7,tier=process"},
	{Value: "process=1000000000,pod=1,epoch=7,tier=process"},
	{Value: "process=3,pod=,epoch=7,tier=process"},
	{Value: "process=3,pod=1,epoch=0,tier=process"},
	{Value: "process=3,pod=1,epoch=07,tier=process"},
	{Value: "process=3,pod=1,epoch=,tier=process"},
	{Value: "process=3,pod=1,epoch=2147483648,tier=process"},
	{Value: "process=٣,pod=1,epoch=7,tier=process"},
}

// Name is a readable test name for c.
func (c RestartsCase) Name() string {
	return strconv.Quote(c.Value)
}
