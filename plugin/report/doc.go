// Package report is what `kubectl jobset` shows of a JobSet, as pure
// functions: the JobSet, its Pods, Jobs and events in, a report out. It
// reads them as the controller does (controllers/inplace): the same group,
// the same expected count, the same restart budget, the same reasons why a
// Pod has not joined, and the decision the controller takes on that
// reading.
package report
