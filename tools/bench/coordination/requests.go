package main

import (
	"bufio"
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// apiRequestCounts is what the API server's apiserver_request_total says
// it served, from every client: in all, by kind (verb and resource), and
// answered 429 (Priority and Fairness rejecting a request).
type apiRequestCounts struct {
	total, rejected int64
	byKind          map[string]int64
	// queued is how long Priority and Fairness held requests in each
	// priority level's queues, in all, and how many requests it held.
	queuedSeconds map[string]float64
	queued        map[string]int64
}

// apiRequestCountsNow reads the API server's counts.
func apiRequestCountsNow(ctx context.Context, cfg *rest.Config) (apiRequestCounts, error) {
	counts := apiRequestCounts{byKind: map[string]int64{}, queuedSeconds: map[string]float64{}, queued: map[string]int64{}}
	clientset, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return counts, err
	}
	raw, err := clientset.RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return counts, fmt.Errorf("reading the API server's metrics: %w", err)
	}
	scanner := bufio.NewScanner(strings.NewReader(string(raw)))
	scanner.Buffer(make([]byte, 1<<20), 1<<20)
	for scanner.Scan() {
		name, rest, ok := strings.Cut(scanner.Text(), "{")
		if !ok {
			continue
		}
		labels, value, ok := strings.Cut(rest, "} ")
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(value, 64)
		if err != nil {
			continue
		}
		l := metricLabels(labels)
		switch name {
		case "apiserver_flowcontrol_request_wait_duration_seconds_sum":
			counts.queuedSeconds[l["priority_level"]] += v
			continue
		case "apiserver_flowcontrol_request_wait_duration_seconds_count":
			counts.queued[l["priority_level"]] += int64(v)
			continue
		case "apiserver_request_total":
		default:
			continue
		}
		counts.total += int64(v)
		counts.byKind[requestKind(l["verb"], l["resource"], l["subresource"])] += int64(v)
		if l["code"] == "429" {
			counts.rejected += int64(v)
		}
	}
	return counts, scanner.Err()
}

// metricLabels parses a metric's labels, a="x",b="y" (values hold no
// quotes or commas here: verbs, resources, codes).
func metricLabels(s string) map[string]string {
	labels := map[string]string{}
	for _, pair := range strings.Split(s, ",") {
		if k, v, ok := strings.Cut(pair, "="); ok {
			labels[k] = strings.Trim(v, `"`)
		}
	}
	return labels
}

// requestKind names a kind of request for a summary key: patch_pods_status.
func requestKind(verb, resource, subresource string) string {
	kind := strings.ToLower(verb)
	if resource != "" {
		kind += "_" + resource
	}
	if subresource != "" {
		kind += "_" + subresource
	}
	return kind
}

func (c apiRequestCounts) minus(before apiRequestCounts) apiRequestCounts {
	d := apiRequestCounts{total: c.total - before.total, rejected: c.rejected - before.rejected, byKind: map[string]int64{},
		queuedSeconds: map[string]float64{}, queued: map[string]int64{}}
	for k, v := range c.byKind {
		if v -= before.byKind[k]; v > 0 {
			d.byKind[k] = v
		}
	}
	for level, v := range c.queued {
		if v -= before.queued[level]; v > 0 {
			d.queued[level] = v
			d.queuedSeconds[level] = c.queuedSeconds[level] - before.queuedSeconds[level]
		}
	}
	return d
}

// perPod lists the kinds of request that came to at least one per hundred
// Pods, as key-value pairs of requests per Pod, most frequent first.
func (c apiRequestCounts) perPod(n int) []any {
	kinds := make([]string, 0, len(c.byKind))
	for k, v := range c.byKind {
		if v*100 >= int64(n) {
			kinds = append(kinds, k)
		}
	}
	sort.Slice(kinds, func(i, j int) bool {
		if c.byKind[kinds[i]] != c.byKind[kinds[j]] {
			return c.byKind[kinds[i]] > c.byKind[kinds[j]]
		}
		return kinds[i] < kinds[j]
	})
	kv := []any{"all", float64(c.total) / float64(n)}
	for _, k := range kinds {
		kv = append(kv, k, float64(c.byKind[k])/float64(n))
	}
	return append(kv, c.meanQueued()...)
}

// meanQueued lists, for each priority level that held requests, the mean
// time a request waited in its queues, as key-value pairs
// (queued_ms_workload-high=1.2).
func (c apiRequestCounts) meanQueued() []any {
	levels := make([]string, 0, len(c.queued))
	for level := range c.queued {
		levels = append(levels, level)
	}
	sort.Strings(levels)
	var kv []any
	for _, level := range levels {
		kv = append(kv, "queued_ms_"+level, 1000*c.queuedSeconds[level]/float64(c.queued[level]))
	}
	return kv
}
