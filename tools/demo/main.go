// Command demo shows an in-place group restart on a real cluster: it
// deploys install.yaml, runs the seed's story 1 (docs/examples), makes one
// worker fail, and prints the timeline of the group restart: the trigger,
// the controller deprecating the epoch, each Pod back, the barrier lifted,
// and the total time. tools/demo.sh builds what it needs and brings up the
// local cluster first.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/images/manifest"
	"github.com/fastjobset/jobset/tools/demo/workload"
)

type options struct {
	kubeconfig, install, root, namespace string
	timeout                              time.Duration
}

func main() {
	var o options
	flag.StringVar(&o.kubeconfig, "kubeconfig", os.Getenv("KUBECONFIG"), "The cluster.")
	flag.StringVar(&o.install, "install", "bazel-bin/images/install.yaml", "install.yaml to deploy (empty: already deployed).")
	flag.StringVar(&o.root, "root", ".", "Root of the source tree (for docs/examples and agent/rbac).")
	flag.StringVar(&o.namespace, "namespace", "jobset-demo", "Namespace to run the example in (recreated).")
	flag.DurationVar(&o.timeout, "timeout", 5*time.Minute, "Give up after this long.")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	defer cancel()
	if err := run(ctx, o); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "demo:", err)
	os.Exit(1)
}

type demo struct {
	cluster *workload.Cluster
	o       options
}

func run(ctx context.Context, o options) error {
	cluster, err := workload.Connect(o.kubeconfig, o.root)
	if err != nil {
		return err
	}
	d := demo{cluster: cluster, o: o}

	if o.install != "" {
		say("deploying %s", o.install)
		if err := cluster.Deploy(ctx, o.install); err != nil {
			return err
		}
	}
	js, err := d.startExample(ctx)
	if err != nil {
		return err
	}
	before, err := d.waitUntilRunning(ctx, js)
	if err != nil {
		return err
	}
	return d.restartAndReport(ctx, js, before)
}

func say(format string, args ...any) {
	fmt.Printf(format+"\n", args...)
}

// startExample recreates the namespace with the agent's RBAC and creates
// the story 1 JobSet in it, retrying while the webhook comes up.
func (d demo) startExample(ctx context.Context) (*jobset.JobSet, error) {
	say("making the namespace %s afresh, with the agent's RBAC", d.o.namespace)
	if err := d.cluster.RecreateNamespace(ctx, d.o.namespace); err != nil {
		return nil, err
	}
	example := filepath.Join(d.o.root, "docs/examples/story1-inplace.yaml")
	js := &jobset.JobSet{}
	if err := manifest.ReadObject(example, js); err != nil {
		return nil, err
	}
	js.Namespace = d.o.namespace
	say("creating JobSet %s/%s from %s (2 Jobs x 2 Pods, InPlaceRestart)", js.Namespace, js.Name, example)
	err := poll(ctx, "the webhook to admit the JobSet", func() (bool, error) {
		err := d.cluster.Client.Create(ctx, js.DeepCopy())
		return err == nil || apierrors.IsAlreadyExists(err), nil
	})
	return js, err
}

// pod is what the timeline follows of each Pod.
type pod struct {
	uid      string
	restarts int32 // of the agent, which every in-place restart restarts
	ready    bool  // every container started: the barrier is lifted for it
	phase    corev1.PodPhase
}

func (d demo) pods(ctx context.Context, js *jobset.JobSet) (map[string]pod, error) {
	var list corev1.PodList
	if err := d.cluster.Client.List(ctx, &list, client.InNamespace(js.Namespace), client.MatchingLabels{jobset.JobSetNameKey: js.Name}); err != nil {
		return nil, err
	}
	out := map[string]pod{}
	for _, p := range list.Items {
		if p.DeletionTimestamp != nil {
			continue
		}
		state := pod{uid: string(p.UID), phase: p.Status.Phase, ready: p.Status.Phase == corev1.PodRunning}
		statuses := append(p.Status.InitContainerStatuses, p.Status.ContainerStatuses...)
		if len(statuses) == 0 {
			state.ready = false
		}
		for _, cs := range statuses {
			if cs.Name == "jobset-agent" {
				state.restarts = cs.RestartCount
			}
			if cs.State.Running == nil || !ptr.Deref(cs.Started, false) {
				state.ready = false
			}
		}
		out[p.Name] = state
	}
	return out, nil
}

func (d demo) jobSet(ctx context.Context, js *jobset.JobSet) (synced, deprecated int32, err error) {
	var got jobset.JobSet
	if err := d.cluster.Client.Get(ctx, client.ObjectKeyFromObject(js), &got); err != nil {
		return 0, 0, err
	}
	return ptr.Deref(got.Status.SyncedEpoch, 0), ptr.Deref(got.Status.DeprecatedEpoch, 0), nil
}

func (d demo) waitUntilRunning(ctx context.Context, js *jobset.JobSet) (map[string]pod, error) {
	start := time.Now()
	var pods map[string]pod
	err := poll(ctx, "the 4 workers to run", func() (bool, error) {
		var err error
		if pods, err = d.pods(ctx, js); err != nil {
			return false, err
		}
		if len(pods) != 4 {
			return false, nil
		}
		for _, p := range pods {
			if !p.ready {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	synced, _, err := d.jobSet(ctx, js)
	if err != nil {
		return nil, err
	}
	say("4 workers running in %.1fs; the group is synced at epoch %d", time.Since(start).Seconds(), synced)
	return pods, nil
}

// restartAndReport makes one worker exit 1 and follows the group restart
// until every Pod runs again at the next epoch.
func (d demo) restartAndReport(ctx context.Context, js *jobset.JobSet, before map[string]pod) error {
	names := make([]string, 0, len(before))
	for name := range before {
		names = append(names, name)
	}
	sort.Strings(names)
	victim := names[len(names)-1]
	synced0, deprecated0, err := d.jobSet(ctx, js)
	if err != nil {
		return err
	}

	say("")
	say("timeline of the group restart")
	t0 := time.Now()
	at := func(format string, args ...any) {
		fmt.Printf("  %6.2fs  %s\n", time.Since(t0).Seconds(), fmt.Sprintf(format, args...))
	}
	if _, err := d.cluster.Clientset.CoreV1().Pods(js.Namespace).ProxyGet("http", victim, "8081", "/exit",
		map[string]string{"code": strconv.Itoa(1)}).DoRaw(ctx); err != nil {
		return fmt.Errorf("asking the worker of %s to fail: %w", victim, err)
	}
	at("trigger: the worker of %s exits with code 1", victim)

	restarted := map[string]bool{}
	back := map[string]bool{}
	deprecated := deprecated0
	for {
		select {
		case <-ctx.Done():
			return fmt.Errorf("the group did not re-sync in time: %w", ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
		synced, dep, err := d.jobSet(ctx, js)
		if err != nil {
			return err
		}
		if dep != deprecated {
			deprecated = dep
			at("controller: epoch %d deprecated (status.deprecatedEpoch=%d): the other agents restart their Pods", dep, dep)
		}
		pods, err := d.pods(ctx, js)
		if err != nil {
			return err
		}
		for _, name := range names {
			p, ok := pods[name]
			if !ok {
				continue
			}
			if p.uid != before[name].uid {
				return fmt.Errorf("not an in-place restart: Pod %s was recreated (UID %s -> %s)", name, before[name].uid, p.uid)
			}
			if !restarted[name] && p.restarts > before[name].restarts {
				restarted[name] = true
				at("%s: containers restarted in place (same Pod UID, restart %d)", name, p.restarts)
			}
			if restarted[name] && !back[name] && p.ready {
				back[name] = true
				at("%s: back, every container started", name)
			}
		}
		if synced > synced0 && len(back) == len(names) {
			at("barrier lifted: status.syncedEpoch=%d, all %d workers running", synced, len(names))
			say("")
			say("in-place group restart: %.1fs from the failure to every worker running again; same %d Pods, no Pod recreated",
				time.Since(t0).Seconds(), len(names))
			return nil
		}
	}
}

// poll calls done every 200 ms until it reports true or fails.
func poll(ctx context.Context, what string, done func() (bool, error)) error {
	err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(context.Context) (bool, error) { return done() })
	if err != nil && ctx.Err() != nil {
		return fmt.Errorf("waiting for %s: %w", what, err)
	}
	return err
}
