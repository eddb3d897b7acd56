package jobsetcontroller

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
)

// lastSyncs remembers when each in-place group last synced, as its
// InPlaceRestarting condition said before a group restart replaced it: the
// reference against which the completion of that restart tells how each
// member came back (inplace.RestartTiers). A member's containers that the
// kubelet restarted for the restart may have ended before the controller
// saw anything, so the restart's own start is no reference. This is
// reporting only: a controller that did not see the group synced before
// the restart began (it started, or took the lead, in the middle) reports
// no tiers for that restart.
type lastSyncs struct {
	mu sync.Mutex
	at map[types.NamespacedName]lastSync
}

type lastSync struct {
	uid types.UID
	at  time.Time
}

// observe remembers the JobSet's last sync if its condition shows one, and
// returns the one remembered for it, false if none.
func (l *lastSyncs) observe(js *jobset.JobSet) (time.Time, bool) {
	key := types.NamespacedName{Namespace: js.Namespace, Name: js.Name}
	l.mu.Lock()
	defer l.mu.Unlock()
	if c := meta.FindStatusCondition(js.Status.Conditions, string(jobset.JobSetInPlaceRestarting)); c != nil && c.Status == metav1.ConditionFalse {
		if l.at == nil {
			l.at = map[types.NamespacedName]lastSync{}
		}
		l.at[key] = lastSync{uid: js.UID, at: c.LastTransitionTime.Time}
	}
	s, ok := l.at[key]
	if !ok || s.uid != js.UID {
		return time.Time{}, false
	}
	return s.at, true
}

// forget drops what is remembered of a JobSet that is gone.
func (l *lastSyncs) forget(key types.NamespacedName) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.at, key)
}
