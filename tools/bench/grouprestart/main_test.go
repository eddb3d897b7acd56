package main

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/fastjobset/jobset/api/jobset/agentspec"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/tools/bench/internal/summary"
)

func TestParseWays(t *testing.T) {
	cases := map[string]struct {
		list    string
		want    []string
		wantErr bool
	}{
		"the default": {list: "InPlaceRestart/process,InPlaceRestart/pod,CommunityInPlaceRestart,Recreate",
			want: []string{process, pod, recreate, community}},
		"in the order they run, each once": {list: "Recreate, InPlaceRestart/pod,InPlaceRestart/process,Recreate",
			want: []string{process, pod, recreate}},
		"ours without the wrapper": {list: "InPlaceRestart", want: []string{ours}},
		"unknown":                  {list: "InPlaceRestart/proc", wantErr: true},
		"empty":                    {list: "", wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := parseWays(tc.list)
			if (err != nil) != tc.wantErr {
				t.Fatalf("parseWays(%q) error %v, want error %v", tc.list, err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("parseWays(%q) (-want +got):\n%s", tc.list, diff)
			}
		})
	}
	if got, err := parseWays(strings.Join(defaultWays, ",")); err != nil || !slices.Equal(got, []string{process, pod, recreate, community}) {
		t.Errorf("the default -strategies give %v, %v: both tiers, Recreate and community", got, err)
	}
}

func TestParseWorkers(t *testing.T) {
	cases := map[string]struct {
		list    string
		want    []int
		wantErr bool
	}{
		"sizes":      {list: "4,8,16", want: []int{4, 8, 16}},
		"one":        {list: "1", want: []int{1}},
		"odd":        {list: "4,3", wantErr: true},
		"not a size": {list: "eight", wantErr: true},
		"zero":       {list: "0", wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := parseWorkers(tc.list)
			if (err != nil) != tc.wantErr {
				t.Fatalf("parseWorkers(%q) error %v, want error %v", tc.list, err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("parseWorkers(%q) (-want +got):\n%s", tc.list, diff)
			}
		})
	}
}

func TestRatios(t *testing.T) {
	cases := map[string]struct {
		m, floor medians
		want     string
	}{
		"both tiers, community and Recreate: the tiers compared by their workers' starts": {
			m: medians{
				total:   map[string]float64{process: 1, pod: 3.5, community: 4.5, recreate: 5.5},
				started: map[string]float64{process: 1, pod: 3, community: 4, recreate: 5},
			},
			floor: medians{total: map[string]float64{process: 0.5, pod: 2.5}, started: map[string]float64{process: 0.5, pod: 2}},
			want: "bench=group-restart-ratio workers=8 process_over_single_pod=2.00 pod_over_single_pod=1.50" +
				" recreate_over_process=5.00 pod_over_process=3.00 community_over_process=4.00" +
				" recreate_over_pod=1.67 community_over_pod=1.33 recreate_over_community=1.22",
		},
		"ours without the wrapper, as before the tiers: the totals": {
			m: medians{
				total:   map[string]float64{ours: 4, community: 5, recreate: 6},
				started: map[string]float64{ours: 3, community: 4, recreate: 5},
			},
			floor: medians{total: map[string]float64{ours: 2}, started: map[string]float64{ours: 1}},
			want: "bench=group-restart-ratio workers=8 inplace_over_single_pod=2.00 recreate_over_inplace=1.50" +
				" community_over_inplace=1.25 recreate_over_community=1.20",
		},
		"a way whose workers' starts were not read has no tier ratio": {
			m: medians{
				total:   map[string]float64{process: 1, recreate: 5},
				started: map[string]float64{process: 1},
			},
			want: "bench=group-restart-ratio workers=8",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := summary.Line("group-restart-ratio", ratios(8, tc.m, tc.floor)...); got != tc.want {
				t.Errorf("ratios:\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestResultLine(t *testing.T) {
	runs := []timeline{
		{at: map[string]float64{"failed_s": 0.1, "deprecated_s": 0.2, "stopped_s": 0.5, "synced_s": 0.6}, total: 0.9, started: 0.9,
			pods:     map[string][]float64{"joined": {0.3, 0.4, 0.5}, "worker_up": {0.8, 0.85, 0.9}},
			joinedBy: map[agentspec.Tier]int{agentspec.TierProcess: 3}},
		{at: map[string]float64{"failed_s": 0.1, "deprecated_s": 0.2, "stopped_s": 0.6, "synced_s": 0.7}, total: 1.1, started: 1.1,
			pods:     map[string][]float64{"joined": {0.3, 0.5, 0.6}, "worker_up": {0.9, 1, 1.1}},
			joinedBy: map[agentspec.Tier]int{agentspec.TierProcess: 2, agentspec.TierPod: 1}},
		{at: map[string]float64{"failed_s": 0.2, "deprecated_s": 0.3, "stopped_s": 0.5, "synced_s": 0.6}, total: 1, started: 1,
			pods:     map[string][]float64{"joined": {0.3, 0.4, 0.5}, "worker_up": {0.8, 0.9, 1}},
			joinedBy: map[agentspec.Tier]int{agentspec.TierProcess: 3}},
	}
	kv, total, started := resultLine(result{strategy: process, workers: 4, runs: runs})
	want := "bench=group-restart strategy=InPlaceRestart/process workers=4 p50_s=1.00 p90_s=1.10 runs=3" +
		" p50_failed_s=0.1 p50_deprecated_s=0.2 p50_stopped_s=0.5 p50_synced_s=0.6" +
		" p50_worker_started_s=1.00 p90_worker_started_s=1.10" +
		" pod_p50_joined_s=0.4 pod_last_joined_s=0.5 pod_p50_worker_up_s=0.9 pod_last_worker_up_s=1.00" +
		" joined_by_process=8 joined_by_pod=1"
	if got := summary.Line("group-restart", kv...); got != want {
		t.Errorf("resultLine:\n got %s\nwant %s", got, want)
	}
	if total != 1 || started != 1 {
		t.Errorf("medians %v, %v, want 1, 1", total, started)
	}

	// Recreate: no start records read, no tiers.
	kv, _, started = resultLine(result{strategy: recreate, workers: 4, runs: []timeline{{at: map[string]float64{"restarted_s": 4}, total: 5}}})
	want = "bench=group-restart strategy=Recreate workers=4 p50_s=5.00 p90_s=5.00 runs=1 p50_restarted_s=4.00"
	if got := summary.Line("group-restart", kv...); got != want || started != 0 {
		t.Errorf("resultLine:\n got %s (started %v)\nwant %s (started 0)", got, started, want)
	}
}

func TestRunLine(t *testing.T) {
	got := summary.Line("group-restart-run", runLine(pod, 8, 2, timeline{
		at: map[string]float64{"failed_s": 0.7, "restarted_s": 2}, total: 3.5, started: 3,
		joinedBy: map[agentspec.Tier]int{agentspec.TierPod: 8},
	})...)
	want := "bench=group-restart-run strategy=InPlaceRestart/pod workers=8 run=2 seconds=3.50 failed_s=0.7 restarted_s=2.00" +
		" worker_started_s=3.00 joined_by_process=0 joined_by_pod=8"
	if got != want {
		t.Errorf("runLine:\n got %s\nwant %s", got, want)
	}
}

func TestParseStartsAndStartAfter(t *testing.T) {
	log := "uid-a 2026-11-29T23:00:00.5Z\nuid-a 2026-11-29T23:00:07.25Z\n\nuid-b 2026-11-29T23:00:09Z\n"
	records, err := parseStarts(log)
	if err != nil {
		t.Fatal(err)
	}
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	cases := map[string]struct {
		uid    types.UID
		seen   int
		want   time.Time
		wantOK bool
	}{
		"restarted in place: the record after those seen": {uid: "uid-a", seen: 1, want: at("2026-11-29T23:00:07.25Z"), wantOK: true},
		"not restarted yet":                  {uid: "uid-a", seen: 2},
		"a new Pod: its first record":        {uid: "uid-b", want: at("2026-11-29T23:00:09Z"), wantOK: true},
		"another Pod's records do not count": {uid: "uid-b", seen: 1},
		"no record of the Pod":               {uid: "uid-c"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, ok := startAfter(records, tc.uid, tc.seen)
			if ok != tc.wantOK || !got.Equal(tc.want) {
				t.Errorf("startAfter(%s, %d) = %v, %v, want %v, %v", tc.uid, tc.seen, got, ok, tc.want, tc.wantOK)
			}
		})
	}
	for _, bad := range []string{"uid-a", "uid-a yesterday", "uid-a 2026-11-29T23:00:00Z extra"} {
		if _, err := parseStarts(bad); err == nil {
			t.Errorf("parseStarts(%q) gave no error", bad)
		}
	}
}

func TestNamespaceOfIsALabel(t *testing.T) {
	for _, s := range allWays {
		ns := namespaceOf(s, 16)
		if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
			t.Errorf("namespaceOf(%s) = %q: %v", s, ns, errs)
		}
	}
	if namespaceOf(process, 8) == namespaceOf(pod, 8) {
		t.Error("the tiers share a namespace")
	}
}

func TestJoinedBy(t *testing.T) {
	pod := func(name, uid, epoch, restarts string) corev1.Pod {
		p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(uid), Annotations: map[string]string{jobset.EpochKey: epoch}}}
		if restarts != "" {
			p.Annotations[agentspec.WorkerRestartsAnnotation] = restarts
		}
		return p
	}
	base := []corev1.Pod{pod("a", "1", "3", ""), pod("b", "2", "3", ""), pod("c", "3", "3", ""), pod("d", "4", "3", "")}
	now := []corev1.Pod{
		pod("a", "1", "4", "process=1,pod=0,epoch=4,tier=process"),
		pod("b", "2", "4", "process=0,pod=1,epoch=4,tier=pod"),
		pod("c", "3", "3", "process=0,pod=0,epoch=3,tier=new"), // not joined yet
		pod("d", "4", "4", "garbled"),
	}
	want := map[agentspec.Tier]int{agentspec.TierProcess: 1, agentspec.TierPod: 1, "unknown": 1}
	if diff := cmp.Diff(want, joinedBy(base, now)); diff != "" {
		t.Errorf("joinedBy (-want +got):\n%s", diff)
	}
	if joined(base, []corev1.Pod{pod("a", "9", "4", "")}, "a") {
		t.Error("a replaced Pod counts as joined")
	}
}

// In the process tier a Pod shows only its agent's join, and its worker's
// start comes from its record: no container step is dated.
func TestPodClockInTheProcessTier(t *testing.T) {
	start := time.Now()
	pod := func(name, epoch string) corev1.Pod {
		return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{jobset.EpochKey: epoch}}}
	}
	c := newPodClock(process, start, []corev1.Pod{pod("a", "3"), pod("b", "3")})
	c.observe([]corev1.Pod{pod("a", "4"), pod("b", "3")})
	c.observe([]corev1.Pod{pod("a", "4"), pod("b", "4")})
	c.workerStarted("a", start.Add(900*time.Millisecond))
	c.workerStarted("b", start.Add(1100*time.Millisecond))
	c.workerStarted("unknown", start.Add(time.Hour))
	steps := c.steps()
	if got := slices.Sorted(func(yield func(string) bool) {
		for step := range steps {
			if !yield(step) {
				return
			}
		}
	}); !slices.Equal(got, []string{"joined", "worker_up"}) {
		t.Errorf("steps dated %v, want joined and worker_up", got)
	}
	if diff := cmp.Diff([]float64{0.9, 1.1}, steps["worker_up"]); diff != "" {
		t.Errorf("worker_up (-want +got):\n%s", diff)
	}
	if len(steps["joined"]) != 2 || steps["joined"][0] > steps["joined"][1] {
		t.Errorf("joined %v, want two times in order", steps["joined"])
	}
}
