package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/fastjobset/jobset/tools/demo/workload"
)

// The worker's own start records (e2e/worker, GET /starts): each start of
// the worker's process appends "<Pod UID> <time, RFC 3339>" to a file on
// the Pod's emptyDir, first thing in its main, before it serves. A
// restart in place keeps the volume, so a Pod's new start is its record
// after the ones it had before the trigger; a recreated Pod's volume is
// new, its first record is its start. The record is the only sign of a
// process-tier restart's end (no container restarts, no status changes),
// and, read by every way, the measure their ratios share. On the local
// cluster the node's clock is the harness's: the records date the starts
// to the same clock as the trigger.

// startRecord is one line of a start log.
type startRecord struct {
	uid types.UID
	at  time.Time
}

// parseStarts reads a start log.
func parseStarts(log string) ([]startRecord, error) {
	var records []startRecord
	for _, line := range strings.Split(strings.TrimSpace(log), "\n") {
		if line == "" {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) != 2 {
			return nil, fmt.Errorf("start log line %q: not \"<Pod UID> <time>\"", line)
		}
		at, err := time.Parse(time.RFC3339Nano, fields[1])
		if err != nil {
			return nil, fmt.Errorf("start log line %q: %w", line, err)
		}
		records = append(records, startRecord{uid: types.UID(fields[0]), at: at})
	}
	return records, nil
}

// startAfter is the Pod's first start after the seen records of its UID
// (none: its start is its first), and whether it has one yet.
func startAfter(records []startRecord, uid types.UID, seen int) (time.Time, bool) {
	n := 0
	for _, r := range records {
		if r.uid != uid {
			continue
		}
		if n == seen {
			return r.at, true
		}
		n++
	}
	return time.Time{}, false
}

// readStarts reads the worker's start log of Pod name once, through the
// API server's proxy: an error while the worker does not serve (it has
// not started yet, or it has exited).
func readStarts(ctx context.Context, c *workload.Cluster, ns, name string) ([]startRecord, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	out, err := c.Clientset.CoreV1().Pods(ns).ProxyGet("http", name, "8081", "/starts", nil).DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("the start log of %s: %w", name, err)
	}
	return parseStarts(string(out))
}

// readAllStarts reads the start logs of the Pods at once, and returns
// those it read.
func readAllStarts(ctx context.Context, c *workload.Cluster, ns string, names []string) map[string][]startRecord {
	var mu sync.Mutex
	var wg sync.WaitGroup
	out := map[string][]startRecord{}
	for _, name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if records, err := readStarts(ctx, c, ns, name); err == nil {
				mu.Lock()
				out[name] = records
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return out
}

// countStarts returns, by Pod UID, how many starts each Pod's log holds
// for it, once every Pod's worker serves: what a restart's new records
// come after.
func countStarts(ctx context.Context, c *workload.Cluster, ns string, pods map[string]workload.PodState) (map[types.UID]int, error) {
	counts := map[types.UID]int{}
	var missing []string
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		missing = missing[:0]
		var names []string
		for name, p := range pods {
			if _, ok := counts[p.UID]; !ok {
				names = append(names, name)
			}
		}
		read := readAllStarts(ctx, c, ns, names)
		for _, name := range names {
			records, ok := read[name]
			if !ok || len(records) == 0 {
				missing = append(missing, name)
				continue
			}
			uid, n := pods[name].UID, 0
			for _, r := range records {
				if r.uid == uid {
					n++
				}
			}
			counts[uid] = n
		}
		return len(missing) == 0, nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading the workers' start logs (%v do not serve): %w", missing, err)
	}
	return counts, nil
}
