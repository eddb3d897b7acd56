// Command pause is the Pod sandbox of the local cluster: it holds the
// Pod's namespaces and does nothing else until it is told to stop. Nothing
// can be pulled here, so the cluster builds its own instead of
// registry.k8s.io/pause.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	<-signals
}
