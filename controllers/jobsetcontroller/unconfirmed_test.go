package jobsetcontroller

import (
	"context"
	"errors"
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
)

func TestUnconfirmedWritesAnnounceTheWriteThatLanded(t *testing.T) {
	key := types.NamespacedName{Namespace: "ns", Name: "trainer"}
	read := func(rv string, restarts int32) *jobset.JobSet {
		js := &jobset.JobSet{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name, UID: "uid-1", ResourceVersion: rv}}
		js.Status.Restarts = restarts
		return js
	}
	// write is a status write from what the reconcile read, at rv, that
	// counts a full restart; its condition carries a time finer than the
	// API server stores.
	write := func(rv string) *statusUpdate {
		u := newStatusUpdate(read(rv, 0), metav1.Now())
		u.js.Status.Restarts = 1
		u.js.Status.Conditions = []metav1.Condition{{Type: string(jobset.JobSetRestarting), Status: metav1.ConditionTrue,
			LastTransitionTime: metav1.NewTime(u.now.Add(1234))}}
		return u
	}
	stored := func(u *statusUpdate, rv string) *jobset.JobSet {
		js := read(rv, 0)
		s, err := asStored(u.js.Status)
		if err != nil {
			t.Fatal(err)
		}
		js.Status = s
		return js
	}
	cases := map[string]struct {
		held      int
		seen      func(held []*statusUpdate) []*jobset.JobSet
		announced []int
	}{
		"the cache still shows the version the write was guarded by: nothing yet": {
			held: 1,
			seen: func([]*statusUpdate) []*jobset.JobSet { return []*jobset.JobSet{read("5", 0)} },
		},
		"the write landed: announced once, however often the JobSet is seen after": {
			held: 1,
			seen: func(h []*statusUpdate) []*jobset.JobSet {
				return []*jobset.JobSet{read("5", 0), stored(h[0], "6"), stored(h[0], "6"), stored(h[0], "7")}
			},
			announced: []int{0},
		},
		"the JobSet moved on without the write (its spec changed): forgotten": {
			held: 1,
			seen: func([]*statusUpdate) []*jobset.JobSet { return []*jobset.JobSet{read("6", 0), read("7", 0)} },
		},
		"two writes on the same version: the one that landed": {
			held:      2,
			seen:      func(h []*statusUpdate) []*jobset.JobSet { return []*jobset.JobSet{stored(h[1], "6")} },
			announced: []int{1},
		},
		"a JobSet of the same name, created again: forgotten": {
			held: 1,
			seen: func(h []*statusUpdate) []*jobset.JobSet {
				js := stored(h[0], "9")
				js.UID = "uid-2"
				return []*jobset.JobSet{js}
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var w unconfirmedWrites
			var announced []int
			var held []*statusUpdate
			for i := range tc.held {
				u := write("5")
				u.js.Status.Conditions[0].Message = fmt.Sprint("attempt ", i)
				held = append(held, u)
				w.hold(key, u, func() { announced = append(announced, i) })
			}
			for _, js := range tc.seen(held) {
				w.confirm(js)
			}
			if fmt.Sprint(announced) != fmt.Sprint(tc.announced) {
				t.Errorf("announced the writes %v, want %v", announced, tc.announced)
			}
		})
	}
}

func TestUnconfirmedWritesForgetOnAWriteThatSucceeded(t *testing.T) {
	key := types.NamespacedName{Namespace: "ns", Name: "trainer"}
	var w unconfirmedWrites
	u := newStatusUpdate(&jobset.JobSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "trainer", ResourceVersion: "5"}}, metav1.Now())
	u.js.Status.Restarts = 1
	w.hold(key, u, func() { t.Error("announced a write that a later write on its version replaced") })
	w.forget(key)
	landed := u.js.DeepCopy()
	landed.ResourceVersion = "6"
	w.confirm(landed)
}

func TestMayHaveLanded(t *testing.T) {
	jobsets := schema.GroupResource{Group: jobset.GroupVersion.Group, Resource: "jobsets"}
	cases := map[string]struct {
		err  error
		want bool
	}{
		"no answer in time":                           {err: fmt.Errorf("writing: %w", context.DeadlineExceeded), want: true},
		"the connection lost":                         {err: errors.New("http2: client connection lost"), want: true},
		"the server timed out storing it":             {err: apierrors.NewTimeoutError("etcd", 1), want: true},
		"the server failed inside":                    {err: apierrors.NewInternalError(errors.New("etcd")), want: true},
		"refused: written on a stale version":         {err: apierrors.NewConflict(jobsets, "trainer", errors.New("modified"))},
		"refused: the JobSet is gone":                 {err: apierrors.NewNotFound(jobsets, "trainer")},
		"refused: too many requests, come back later": {err: apierrors.NewTooManyRequests("slow down", 1)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := mayHaveLanded(tc.err); got != tc.want {
				t.Errorf("mayHaveLanded(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}
