// Package integration holds the envtest suite of the JobSet reconciler: a
// real kube-apiserver and etcd, the real reconciler in a manager, and no
// kube-controller-manager, so the tests play the Job controller (Job status)
// and the garbage collector (foreground deletion) by hand.
package integration
