package jobsetcontroller

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
)

func TestLastSyncs(t *testing.T) {
	synced := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	js := func(uid types.UID, status metav1.ConditionStatus, at time.Time) *jobset.JobSet {
		j := &jobset.JobSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "trainer", UID: uid}}
		j.Status.Conditions = []metav1.Condition{{Type: string(jobset.JobSetInPlaceRestarting), Status: status, LastTransitionTime: metav1.NewTime(at)}}
		return j
	}
	var l lastSyncs
	if _, ok := l.observe(&jobset.JobSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "trainer", UID: "a"}}); ok {
		t.Error("a JobSet never seen synced has a last sync")
	}
	if got, ok := l.observe(js("a", metav1.ConditionFalse, synced)); !ok || !got.Equal(synced) {
		t.Errorf("synced: %v %t, want %v", got, ok, synced)
	}
	if got, ok := l.observe(js("a", metav1.ConditionTrue, synced.Add(time.Minute))); !ok || !got.Equal(synced) {
		t.Errorf("during the restart that followed: %v %t, want the sync before it, %v", got, ok, synced)
	}
	if _, ok := l.observe(js("b", metav1.ConditionTrue, synced.Add(time.Minute))); ok {
		t.Error("a JobSet of the same name created anew has the old one's last sync")
	}
	l.observe(js("a", metav1.ConditionFalse, synced))
	l.forget(types.NamespacedName{Namespace: "ns", Name: "trainer"})
	if _, ok := l.observe(js("a", metav1.ConditionTrue, synced)); ok {
		t.Error("a forgotten JobSet still has a last sync")
	}
}
