package jobsetcontroller

import (
	"encoding/json"
	"errors"
	"sync"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
)

// unconfirmedWrites keeps, by JobSet name, the status writes that failed
// without the API server saying it refused them: a request that timed out
// or lost its connection may have been stored all the same. The events
// and metrics of such a write wait here until a later reconcile sees
// whether it landed. It did when the JobSet moved past the version the
// write was guarded by and holds the status the write sent: only this
// controller writes the status, and every write is guarded. Otherwise the
// write is forgotten, and the reconcile decides again and announces what
// it writes itself.
type unconfirmedWrites struct {
	mu       sync.Mutex
	byJobSet map[types.NamespacedName][]unconfirmedWrite
}

// unconfirmedWrite is one status write whose answer was lost.
type unconfirmedWrite struct {
	uid types.UID
	// guard is the resourceVersion the write was guarded by.
	guard string
	// status is the status the write sent, as the API server stores it.
	status   jobset.JobSetStatus
	announce func()
}

// hold keeps a write whose answer was lost. Writes guarded by the same
// version are kept side by side: at most one of them landed.
func (w *unconfirmedWrites) hold(key types.NamespacedName, u *statusUpdate, announce func()) {
	stored, err := asStored(u.js.Status)
	if err != nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.byJobSet == nil {
		w.byJobSet = map[types.NamespacedName][]unconfirmedWrite{}
	}
	guard := u.original.ResourceVersion
	held := w.byJobSet[key]
	if len(held) > 0 && held[0].guard != guard {
		held = nil
	}
	w.byJobSet[key] = append(held, unconfirmedWrite{uid: u.js.UID, guard: guard, status: stored, announce: announce})
}

// confirm announces the held write of js that landed, if the JobSet
// shows which did. It keeps the writes while the JobSet is still at the
// version they were guarded by: the cache may not show the write yet, and
// a write repeated on that version fails with a conflict if it did land.
func (w *unconfirmedWrites) confirm(js *jobset.JobSet) {
	key := types.NamespacedName{Namespace: js.Namespace, Name: js.Name}
	w.mu.Lock()
	held := w.byJobSet[key]
	if len(held) == 0 || held[0].guard == js.ResourceVersion {
		w.mu.Unlock()
		return
	}
	delete(w.byJobSet, key)
	w.mu.Unlock()
	for _, h := range held {
		if h.uid == js.UID && apiequality.Semantic.DeepEqual(h.status, js.Status) {
			h.announce()
			return
		}
	}
}

// forget drops what is held for a JobSet: a write of it succeeded, which
// it could not have on a version that a held write had moved on, or the
// JobSet is gone.
func (w *unconfirmedWrites) forget(key types.NamespacedName) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.byJobSet, key)
}

// mayHaveLanded says whether a failed write may still have been stored: an
// answer from the API server that refuses it (a 4xx status) says it was
// not; no answer, or the server failing inside, does not say.
func mayHaveLanded(err error) bool {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		code := status.Status().Code
		return code == 0 || code >= 500
	}
	return true
}

// asStored is a status as the API server stores and returns it: times to
// the second, empty lists left out.
func asStored(s jobset.JobSetStatus) (jobset.JobSetStatus, error) {
	var stored jobset.JobSetStatus
	data, err := json.Marshal(s)
	if err == nil {
		err = json.Unmarshal(data, &stored)
	}
	return stored, err
}
