// Package agent is the sidecar of in-place restarts (KEP-467): one per
// worker Pod, it joins the Pod to an epoch of its JobSet, restarts the Pod in
// place when the JobSet deprecates that epoch, and holds the worker back (the
// barrier) until every Pod of the group has joined.
//
// # Protocol
//
// The agent watches its JobSet (one watch, field selector on the name; the
// watch's initial event replaces a GET). From the first status it sees, it
// takes e = status.syncedEpoch + 1 and patches its Pod's annotation
// jobset.sigs.k8s.io/epoch to e; until that patch succeeded it acts on
// nothing. Then, on every status:
//
//   - e <= status.deprecatedEpoch: exit with the restart exit code; the
//     kubelet's RestartAllContainers rule restarts every container of the
//     Pod in place, and the new agent joins the next epoch. Where the
//     worker runs under the worker wrapper (JOBSET_WRAPPER_CONTROL), the
//     agent first has the wrapper stop the worker's processes, so that the
//     worker stops even when the kubelet does not act (worker.go).
//   - e == status.syncedEpoch: lift the barrier: the startup probe path
//     (default :8080/barrier-is-lifted) answers 200 from then on, so the
//     kubelet starts the worker. Before that it answers 503 and says why.
//
// # The fence
//
// An agent that joined an epoch and has been out of contact with the API
// server for FENCE_AFTER_SECONDS (default 15; 0: never) fences: once its
// worker may run (the barrier lifted) it exits with the restart code, so
// that the kubelet stops the worker; a worker still at the barrier stays
// there until the agent has written its epoch to the Pod again. The
// controller replaces the ranks of a node it no longer hears from only
// after a longer bound (fence.go).
//
// # Exit codes
//
//	88 (RESTART_POD_IN_PLACE_EXIT_CODE, 1..255)  restart the Pod in place
//	0                                            SIGTERM/SIGINT: the Pod is shutting down
//	2                                            bad configuration (the message names the variable)
//	3                                            fatal (for example the barrier port is taken)
//
// The agent's restart rule restarts every container of the Pod in place on
// every exit, 0 included (RestartAllContainers, exit codes NotIn nothing):
// the restart code, a crash, an OOM kill or a kubelet that stopped the
// agent alone. A new agent joins the next epoch, so its worker must
// restart with it; deleting the Pod is not affected, as the kubelet
// applies no restart rules to a terminating Pod (docs/user-guide.md, the
// exit-code contract).
//
// # Load on the API server
//
// Thousands of agents restart at once in a group restart. Every failed call
// is retried with exponential backoff and full jitter, added to a 429's
// Retry-After (which the API server gives every agent alike). The bound
// stays at 2 s while no API server answers, and through the answers of one
// still starting, so the fleet returns within seconds of it; any other 5xx
// or 429 lets it grow to 30 s, since a server that answers and fails is
// most often overloaded. A watch that
// ends resumes after a jittered pause of up to a second, from its last
// resourceVersion (or afresh after 410 Gone), without losing the agent's
// epoch, so an API server rollout does not bring every watch back at once.
package agent
