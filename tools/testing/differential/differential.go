// Package differential compares what two JobSet controllers made of the
// same scenario: community JobSet with a feature gate on, and ours with the
// same gate on (the differential specs, e2e/differential_test.go).
// A scenario's outcome is read into Fields, a flat map from a field's path
// to its value, in terms both sides share: the JobSet's status as stored
// (so a field one side omits shows), its Jobs by name and its Pods by Job
// and completion index, with the labels and annotations of JobSet's keys;
// names that differ between runs (UIDs, times) are replaced by what they
// stand for. Diff lists each field whose value differs, by path.
package differential

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// Fields maps a field's path to its value.
type Fields map[string]string

// Absent is the value Diff shows for a field one side lacks.
const Absent = "(absent)"

// Placeholders for values that differ between runs by nature.
const (
	// TheJobSetUID stands for the UID of the scenario's own JobSet.
	TheJobSetUID = "<the JobSet's UID>"
	// ATime stands for a timestamp: its presence is compared, not when.
	ATime = "<a time>"
)

// keyPrefixes are the prefixes of JobSet's label and annotation keys,
// community's and ours: only these are compared on Jobs and Pods (the Job
// controller and the kubelet write the others, alike under either).
var keyPrefixes = []string{"jobset.sigs.k8s.io/", "alpha.jobset.sigs.k8s.io/"}

// Merge returns one Fields holding every field of each (a later one wins).
func Merge(fields ...Fields) Fields {
	out := Fields{}
	for _, f := range fields {
		maps.Copy(out, f)
	}
	return out
}

// Status is the JobSet's status as stored (read unstructured, so that a
// zero a side omits is absent): every leaf under "status.", lists of
// objects keyed by their name or type ("status.conditions[Restarting].reason",
// "status.replicatedJobsStatus[workers].ready"), other lists as JSON
// ("status.replicatedJobsStatus[workers].jobRestarts": "[1,0]"). Times
// become ATime and the JobSet's UID TheJobSetUID; a condition's message is
// left out (each side words its own).
func Status(js *unstructured.Unstructured) Fields {
	out := Fields{}
	status, _, _ := unstructured.NestedMap(js.Object, "status")
	flatten(out, "status", status, js.GetUID())
	for k := range out {
		if strings.HasPrefix(k, "status.conditions[") && strings.HasSuffix(k, "].message") {
			delete(out, k)
		}
	}
	return out
}

func flatten(out Fields, path string, v any, uid types.UID) {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			flatten(out, path+"."+k, e, uid)
		}
	case []any:
		if keyed(v) {
			for _, e := range v {
				m := e.(map[string]any)
				flatten(out, path+"["+key(m)+"]", m, uid)
			}
			return
		}
		text, _ := json.Marshal(v)
		out[path] = string(text)
	default:
		out[path] = scalar(fmt.Sprint(v), uid)
	}
}

// keyed: a list of objects, each with a name or a type of its own.
func keyed(list []any) bool {
	if len(list) == 0 {
		return false
	}
	seen := map[string]bool{}
	for _, e := range list {
		m, ok := e.(map[string]any)
		if !ok || key(m) == "" || seen[key(m)] {
			return false
		}
		seen[key(m)] = true
	}
	return true
}

func key(m map[string]any) string {
	for _, k := range []string{"name", "type"} {
		if s, ok := m[k].(string); ok && s != "" {
			return s
		}
	}
	return ""
}

// scalar replaces what differs between runs by what it stands for.
func scalar(s string, uid types.UID) string {
	if uid != "" && s == string(uid) {
		return TheJobSetUID
	}
	if _, err := time.Parse(time.RFC3339, s); err == nil {
		return ATime
	}
	return s
}

// Jobs are the JobSet's Jobs by name: whether each was recreated (its UID
// is not the one in before, the Jobs by name as an earlier look found
// them), its parallelism and completions, its active, ready and failed
// Pods, and its labels and annotations of JobSet's keys. Jobs being
// deleted are left out.
func Jobs(jsUID types.UID, jobs []batchv1.Job, before map[string]types.UID) Fields {
	out := Fields{}
	for _, j := range jobs {
		if j.DeletionTimestamp != nil {
			continue
		}
		p := "job[" + j.Name + "]"
		if before != nil {
			out[p+".recreated"] = strconv.FormatBool(before[j.Name] != j.UID)
		}
		if j.Spec.Parallelism != nil {
			out[p+".parallelism"] = strconv.Itoa(int(*j.Spec.Parallelism))
		}
		if j.Spec.Completions != nil {
			out[p+".completions"] = strconv.Itoa(int(*j.Spec.Completions))
		}
		// What the Job controller counted: alike under either side once
		// settled, and what a scenario waits for before it compares.
		out[p+".status.active"] = strconv.Itoa(int(j.Status.Active))
		out[p+".status.ready"] = strconv.Itoa(int(ptrValue(j.Status.Ready)))
		out[p+".status.failed"] = strconv.Itoa(int(j.Status.Failed))
		keys(out, p, j.Labels, j.Annotations, jsUID)
	}
	return out
}

// Pods are the Pods of the JobSet's Jobs by Job and completion index
// ("pod[js-workers-0/0]"): their phase and their labels and annotations of
// JobSet's keys. Pods being deleted are left out; two Pods of one index
// are an error (a side left one behind).
func Pods(jsUID types.UID, pods []corev1.Pod) (Fields, error) {
	out := Fields{}
	seen := map[string]string{}
	for _, pod := range pods {
		if pod.DeletionTimestamp != nil {
			continue
		}
		job := pod.Labels[batchv1.JobNameLabel]
		index, ok := pod.Labels[batchv1.JobCompletionIndexAnnotation]
		if !ok {
			index = pod.Annotations[batchv1.JobCompletionIndexAnnotation]
		}
		p := "pod[" + job + "/" + index + "]"
		if other, ok := seen[p]; ok {
			return nil, fmt.Errorf("two Pods of Job %s, index %s: %s and %s", job, index, other, pod.Name)
		}
		seen[p] = pod.Name
		out[p+".phase"] = string(pod.Status.Phase)
		keys(out, p, pod.Labels, pod.Annotations, jsUID)
	}
	return out, nil
}

// Events are the reasons of the events about the JobSet (its UID), each
// with its type ("event[RestartJobFailurePolicyAction].type": "Warning"):
// what a user sees in `kubectl describe`, not how often or when.
func Events(jsUID types.UID, events []corev1.Event) Fields {
	out := Fields{}
	for _, e := range events {
		if e.InvolvedObject.UID == jsUID {
			out["event["+e.Reason+"].type"] = e.Type
		}
	}
	return out
}

func ptrValue(p *int32) int32 {
	if p == nil {
		return 0
	}
	return *p
}

func keys(out Fields, path string, labels, annotations map[string]string, uid types.UID) {
	for kind, m := range map[string]map[string]string{"label": labels, "annotation": annotations} {
		for k, v := range m {
			if ours(k) {
				out[path+"."+kind+"["+k+"]"] = scalar(v, uid)
			}
		}
	}
}

func ours(k string) bool {
	for _, p := range keyPrefixes {
		if strings.HasPrefix(k, p) {
			return true
		}
	}
	return false
}

// Diff lists each field whose value differs between the two sides, sorted
// by path, as `path: community "a", ours "b"` (Absent for a field a side
// lacks), but for the fields that match one of ignore: patterns of the
// whole path in which "*" stands for any text, for the differences a spec
// expects and says why.
func Diff(community, ours Fields, ignore ...string) []string {
	var skip []*regexp.Regexp
	for _, pattern := range ignore {
		parts := strings.Split(pattern, "*")
		for i := range parts {
			parts[i] = regexp.QuoteMeta(parts[i])
		}
		skip = append(skip, regexp.MustCompile("^"+strings.Join(parts, ".*")+"$"))
	}
	var out []string
	for _, path := range slices.Sorted(maps.Keys(Merge(community, ours))) {
		if slices.ContainsFunc(skip, func(re *regexp.Regexp) bool { return re.MatchString(path) }) {
			continue
		}
		a, inA := community[path]
		b, inB := ours[path]
		if inA && inB && a == b {
			continue
		}
		out = append(out, fmt.Sprintf("%s: community %s, ours %s", path, show(a, inA), show(b, inB)))
	}
	return out
}

func show(v string, present bool) string {
	if !present {
		return Absent
	}
	return strconv.Quote(v)
}
