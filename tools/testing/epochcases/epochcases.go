// Package epochcases holds the tables of annotation values that every
// reader of a grammar of the protocol is tested against: the epoch's
// (agentspec.ParseEpoch) and the worker restarts' (
// agentspec.ParseWorkerRestarts), each read directly and through the
// agent's admission policy on a real API server, so that the controller
// reads exactly the values the policy lets an agent write.
package epochcases

import "strconv"

// Case is one annotation value and whether it is a valid epoch.
type Case struct {
	Value string
	Valid bool
	// Epoch is the value read, when Valid.
	Epoch int32
}

// Cases covers the grammar's edges: the first and last epoch, and each way
// a value can be out of it.
var Cases = []Case{
	{Value: "1", Valid: true, Epoch: 1},
	{Value: "7", Valid: true, Epoch: 7},
	{Value: "10", Valid: true, Epoch: 10},
	{Value: "2147483647", Valid: true, Epoch: 2147483647},
	{Value: ""},
	{Value: "0"},
	{Value: "00"},
	{Value: "01"},
	{Value: "-1"},
	{Value: "+1"},
	{Value: " 1"},
	{Value: "1 "},
	{Value: "1.0"},
	{Value: "1e3"},
	{Value: "0x10"},
	{Value: "abc"},
	{Value: "2147483648"},
	{Value: "9999999999"},
	{Value: "10000000000"},
	{Value: "٣"}, // a digit, but not an ASCII one
}

// Name is a readable test name for c.
func (c Case) Name() string {
	return strconv.Quote(c.Value)
}
