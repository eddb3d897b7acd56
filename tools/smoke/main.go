// Command smoke is the first-run path of the README until the local cluster
// lands: it starts a real kube-apiserver and etcd, installs the JobSet CRD,
// creates an InPlaceRestart JobSet, plays the epoch protocol's status
// writes by hand, and prints what `kubectl get jobsets` shows at each step.
package main

import (
	"context"
	"fmt"
	"os"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/tools/testing/framework"
	"github.com/fastjobset/jobset/tools/testing/wrappers"
)

func main() {
	if err := run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "smoke:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	fmt.Println("Starting a real kube-apiserver and etcd with the JobSet CRD...")
	env, err := framework.Start()
	if err != nil {
		return err
	}
	defer func() { _ = env.Stop() }()

	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "smoke"}}
	if err := env.Client.Create(ctx, ns); err != nil {
		return err
	}
	js := wrappers.MakeJobSet("trainer", ns.Name).
		RestartStrategy(jobset.InPlaceRestart).
		MaxRestarts(3).
		ReplicatedJob(wrappers.MakeReplicatedJob("workers").Replicas(2).Pods(2).Obj()).
		Obj()
	if err := env.Client.Create(ctx, js); err != nil {
		return err
	}

	steps := []struct {
		what               string
		synced, deprecated int32
	}{
		{"created", 0, 0},
		{"every agent joined epoch 1: syncedEpoch := 1, barriers lift", 1, 0},
		{"a worker failed: deprecatedEpoch := 1, every agent restarts its Pod in place", 1, 1},
		{"every agent joined epoch 2: syncedEpoch := 2, workers run again", 2, 1},
	}
	for _, step := range steps {
		if step.synced > 0 {
			patch := client.MergeFrom(js.DeepCopy())
			js.Status.SyncedEpoch = ptr.To(step.synced)
			js.Status.DeprecatedEpoch = ptr.To(step.deprecated)
			if err := env.Client.Status().Patch(ctx, js, patch); err != nil {
				return err
			}
		}
		table, err := env.Kubectl("get", "jobsets", "-n", ns.Name)
		if err != nil {
			return err
		}
		fmt.Printf("\n# %s\n%s", step.what, table)
	}

	fmt.Println("\nThe schema refuses what no controller may write:")
	patch := client.MergeFrom(js.DeepCopy())
	js.Status.SyncedEpoch = ptr.To[int32](1)
	if err := env.Client.Status().Patch(ctx, js, patch); err != nil {
		fmt.Println(" ", err)
	} else {
		return fmt.Errorf("a decreasing syncedEpoch was accepted")
	}
	return nil
}
