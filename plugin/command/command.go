// Package command is `kubectl jobset`: its subcommands and flags (the
// connection flags named as kubectl's), reading a JobSet through the API
// server and writing what package report makes of it, as a table or JSON.
package command

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/pflag"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/api/scheme"
	"github.com/fastjobset/jobset/api/version"
	"github.com/fastjobset/jobset/plugin/report"
)

// Binary is the plugin's file name: kubectl finds `kubectl-jobset` on
// PATH and runs it for `kubectl jobset`.
const Binary = "kubectl-jobset"

const usage = `kubectl jobset shows what the JobSet controller sees of a JobSet's in-place restarts.

Usage:
  kubectl jobset status NAME [-n NAMESPACE] [-o table|json] [--group GROUP]
      The epochs, which Pods joined the current one and which are missing
      and why, the controller's conditions, its next step, and the restart
      budget left; of one in-place group, for a JobSet that names groups.
  kubectl jobset timeline NAME [-n NAMESPACE] [-o table|json] [--restarts N]
      The last group restarts phase by phase: the failure, the deprecation,
      each member's join, the sync, with their times.
  kubectl jobset --version

Flags:
`

// Run runs the plugin with args (without the program name), writing its
// report to stdout.
func Run(ctx context.Context, args []string, stdout io.Writer) error {
	flags := pflag.NewFlagSet(Binary, pflag.ContinueOnError)
	flags.SetOutput(io.Discard)
	output := flags.StringP("output", "o", "table", "Output format: table or json.")
	restarts := flags.Int("restarts", 3, "timeline: how many of the last group restarts to show.")
	group := flags.String("group", "", "status: the in-place group to show, of a JobSet that names groups (alpha.jobset.sigs.k8s.io/in-place-group); empty: the default group.")
	showVersion := flags.Bool("version", false, "Print the version and exit.")
	loading := clientcmd.NewDefaultClientConfigLoadingRules()
	flags.StringVar(&loading.ExplicitPath, clientcmd.RecommendedConfigPathFlag, "", "Path to the kubeconfig file to use.")
	overrides := &clientcmd.ConfigOverrides{}
	clientcmd.BindOverrideFlags(overrides, flags, clientcmd.RecommendedConfigOverrideFlags(""))
	help := flags.BoolP("help", "h", false, "Show this help.")

	if err := flags.Parse(args); err != nil {
		return fmt.Errorf("%w (kubectl jobset --help lists the subcommands and flags)", err)
	}
	switch {
	case *help:
		_, err := fmt.Fprint(stdout, usage+flags.FlagUsages())
		return err
	case *showVersion:
		_, err := fmt.Fprintln(stdout, version.String(Binary))
		return err
	}
	if *output != "table" && *output != "json" {
		return fmt.Errorf("--output %q: use table or json", *output)
	}
	if *restarts < 1 {
		return fmt.Errorf("--restarts %d: give 1 or more", *restarts)
	}
	rest := flags.Args()
	if len(rest) != 2 || (rest[0] != "status" && rest[0] != "timeline") {
		return fmt.Errorf("expected a subcommand (status or timeline) and a JobSet's name, got %q (kubectl jobset --help lists them)", strings.Join(rest, " "))
	}
	subcommand, name := rest[0], rest[1]

	config := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(loading, overrides)
	namespace, _, err := config.Namespace()
	if err != nil {
		return fmt.Errorf("reading the namespace from the kubeconfig: %w", err)
	}
	restConfig, err := config.ClientConfig()
	if err != nil {
		return fmt.Errorf("reading the kubeconfig (--kubeconfig, $KUBECONFIG or ~/.kube/config): %w", err)
	}
	restConfig.UserAgent = Binary + "/" + version.Version
	s, err := scheme.New()
	if err != nil {
		return err
	}
	c, err := client.New(restConfig, client.Options{Scheme: s})
	if err != nil {
		return fmt.Errorf("connecting to %s: %w", restConfig.Host, err)
	}
	objects, err := read(ctx, c, namespace, name)
	if err != nil {
		return err
	}

	var result any
	switch subcommand {
	case "status":
		if result, err = report.ReadStatus(objects.jobSet, *group, objects.pods, objects.jobs); err != nil {
			return err
		}
	case "timeline":
		result = report.ReadTimeline(objects.jobSet, objects.pods, objects.events, *restarts)
	}
	if *output == "json" {
		encoder := json.NewEncoder(stdout)
		encoder.SetIndent("", "  ")
		return encoder.Encode(result)
	}
	switch r := result.(type) {
	case report.Status:
		return report.WriteStatus(stdout, r, time.Now())
	case []report.Restart:
		return report.WriteTimeline(stdout, r)
	}
	return errors.New("no report") // unreachable: every subcommand has one
}

// objects are what the reports read: the JobSet, its Pods and Jobs (by
// its name label, of every restart attempt), and the events in its
// namespace.
type objects struct {
	jobSet *jobset.JobSet
	pods   []corev1.Pod
	jobs   []batchv1.Job
	events []eventsv1.Event
}

func read(ctx context.Context, c client.Reader, namespace, name string) (objects, error) {
	var o objects
	o.jobSet = &jobset.JobSet{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, o.jobSet); err != nil {
		return o, fmt.Errorf("reading JobSet %s/%s: %w", namespace, name, err)
	}
	children := []client.ListOption{client.InNamespace(namespace), client.MatchingLabels{jobset.JobSetNameKey: name}}
	var pods corev1.PodList
	if err := c.List(ctx, &pods, children...); err != nil {
		return o, fmt.Errorf("listing the Pods of JobSet %s/%s: %w", namespace, name, err)
	}
	var jobs batchv1.JobList
	if err := c.List(ctx, &jobs, children...); err != nil {
		return o, fmt.Errorf("listing the Jobs of JobSet %s/%s: %w", namespace, name, err)
	}
	var events eventsv1.EventList
	if err := c.List(ctx, &events, client.InNamespace(namespace)); err != nil {
		return o, fmt.Errorf("listing the events in namespace %s: %w", namespace, err)
	}
	o.pods, o.jobs, o.events = pods.Items, jobs.Items, events.Items
	return o, nil
}
