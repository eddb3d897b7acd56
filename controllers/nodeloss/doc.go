// Package nodeloss tells when a node is lost, as Cluster API's
// MachineHealthCheck tells an unhealthy Machine: from the kubelets' Leases
// (namespace kube-node-lease), each renewed by its kubelet every quarter
// of its duration. Its Controller feeds the Tracker, sends the JobSet
// reconciler the nodes that turned suspect, and takes the node-lost Taint
// off a node whose kubelet renews again; the rule (Lost) tells when a
// suspect node's members are lost. Declaring a member lost needs its group
// and its agent's settings, which only the JobSet reconciler reads: it
// asks the rule and the Tracker here.
//
// Silence is measured on the controller's own clock, from when it saw the
// Lease last renewed: no node's clock is read. And it counts only while
// the controller itself could see renewals: when the API server is down
// (or the controller's watch is), no kubelet renews and no renewal is seen,
// and every node would look silent once it is back. So a quiet spell of
// QuietGap or more, with no renewal of any Lease seen, ends the
// controller's contact: silence then counts from the first renewal seen
// after it.
package nodeloss
