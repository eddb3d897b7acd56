package agent

import (
	"testing"
	"time"
)

func TestNext(t *testing.T) {
	cases := map[string]struct {
		epoch  int32
		status Epochs
		want   Action
	}{
		"first start: join S+1":                           {epoch: 0, status: Epochs{Synced: 0}, want: Join},
		"first start after group restarts: join S+1":      {epoch: 0, status: Epochs{Synced: 4, Deprecated: 4}, want: Join},
		"joined, others not yet: wait behind the barrier": {epoch: 1, status: Epochs{Synced: 0}, want: Wait},
		"everyone joined my epoch: lift the barrier":      {epoch: 1, status: Epochs{Synced: 1}, want: Lift},
		"my epoch deprecated: restart in place":           {epoch: 1, status: Epochs{Synced: 1, Deprecated: 1}, want: Restart},
		"an older epoch deprecated: keep waiting":         {epoch: 2, status: Epochs{Synced: 1, Deprecated: 1}, want: Wait},
		"synced past me (I missed a restart): restart":    {epoch: 2, status: Epochs{Synced: 4, Deprecated: 3}, want: Restart},
		"synced at my epoch after a deprecation":          {epoch: 2, status: Epochs{Synced: 2, Deprecated: 1}, want: Lift},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := Next(tc.epoch, tc.status); got != tc.want {
				t.Errorf("Next(%d, %+v) = %s, want %s", tc.epoch, tc.status, got, tc.want)
			}
		})
	}
}

func TestFence(t *testing.T) {
	limits := FenceLimits{After: 15 * time.Second, DeferLimit: 10 * time.Minute, AskAhead: time.Second, Witnesses: 1}
	silent := 16 * time.Second
	cases := map[string]struct {
		silence Silence
		limits  FenceLimits
		want    FenceAction
	}{
		"in contact": {Silence{Lifted: true, Joined: true}, limits, CarryOn},
		"silent less than the fence time, and than when its witnesses are asked":                     {Silence{For: 13 * time.Second, Lifted: true, Joined: true}, limits, CarryOn},
		"a fence time of 0 never fences":                                                             {Silence{For: time.Hour, Lifted: true, Joined: true}, FenceLimits{}, CarryOn},
		"not joined, barrier down: nothing to guard":                                                 {Silence{For: silent}, limits, CarryOn},
		"joined, barrier down: hold it":                                                              {Silence{For: silent, Joined: true}, limits, HoldBarrier},
		"joined, barrier held already":                                                               {Silence{For: silent, Joined: true, Fenced: true}, limits, CarryOn},
		"running worker, nobody asked yet: ask":                                                      {Silence{For: silent, Joined: true, Lifted: true}, limits, AskWitnesses},
		"running worker, a second before the fence time: ask, so that the answers are in by then":    {Silence{For: 14 * time.Second, Joined: true, Lifted: true}, limits, AskWitnesses},
		"running worker, alone a second before the fence time: it may yet reach the API server":      {Silence{For: 14 * time.Second, Joined: true, Lifted: true, Witnessed: Alone}, limits, CarryOn},
		"running worker, alone at the fence time: stop":                                              {Silence{For: 15 * time.Second, Joined: true, Lifted: true, Witnessed: Alone}, limits, StopWorker},
		"running worker, alone past the fence time, trying to reach the API server on promises held": {Silence{For: silent, Joined: true, Lifted: true, Witnessed: Alone, Regaining: true}, limits, CarryOn},
		"running worker, regaining past the defer limit: stop":                                       {Silence{For: 10 * time.Minute, Joined: true, Lifted: true, Witnessed: Alone, Regaining: true}, limits, StopWorker},
		"running worker, no witnesses asked for, a second before the fence time":                     {Silence{For: 14 * time.Second, Joined: true, Lifted: true}, FenceLimits{After: 15 * time.Second, AskAhead: time.Second}, CarryOn},
		"running worker, vouched for: keep it":                                                       {Silence{For: silent, Joined: true, Lifted: true, Witnessed: Vouched}, limits, CarryOn},
		"running worker, alone: stop it":                                                             {Silence{For: silent, Joined: true, Lifted: true, Witnessed: Alone}, limits, StopWorker},
		"running worker, vouched, past the limit":                                                    {Silence{For: 10 * time.Minute, Joined: true, Lifted: true, Witnessed: Vouched}, limits, StopWorker},
		"running worker, no witnesses asked for: stop":                                               {Silence{For: silent, Joined: true, Lifted: true}, FenceLimits{After: 15 * time.Second}, StopWorker},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := Fence(tc.silence, tc.limits); got != tc.want {
				t.Errorf("Fence(%+v, %+v) = %s, want %s", tc.silence, tc.limits, got, tc.want)
			}
		})
	}
}

// TestSilenceFor: a node's Lease counts once its peers can tell a shared
// silence, when the agent asks them, and reaches the fence time a round
// of questions later.
func TestSilenceFor(t *testing.T) {
	limits := FenceLimits{After: 15 * time.Second, DeferLimit: 10 * time.Minute, AskAhead: 4 * time.Second, Witnesses: 1}
	// A renew interval of 10 s: a working kubelet's Lease is unrenewed
	// 11.4 s at most, peers tell a shared silence past 23.8 s, and the
	// agent fences on it at 24.8 s.
	renewed := func(unrenewed time.Duration) NodeSilence {
		return NodeSilence{Unrenewed: unrenewed, RenewInterval: 10 * time.Second}
	}
	cases := map[string]struct {
		own    time.Duration
		node   NodeSilence
		limits FenceLimits
		want   time.Duration
	}{
		"in contact, the Lease not followed":                                {0, NodeSilence{}, limits, 0},
		"silent, the Lease not followed: its own silence":                   {5 * time.Second, NodeSilence{Unrenewed: time.Hour}, limits, 5 * time.Second},
		"in contact, the Lease renewed on time":                             {0, renewed(9 * time.Second), limits, 0},
		"in contact, a renewal missed, too soon for peers to tell":          {0, renewed(23 * time.Second), limits, 0},
		"in contact, peers can tell: it asks them":                          {0, renewed(23800 * time.Millisecond), limits, 11 * time.Second},
		"in contact, half a round later":                                    {0, renewed(24300 * time.Millisecond), limits, 13 * time.Second},
		"in contact, a round later: the fence time":                         {0, renewed(24800 * time.Millisecond), limits, 15 * time.Second},
		"in contact, a minute past the fence time":                          {0, renewed(84800 * time.Millisecond), limits, 75 * time.Second},
		"silent longer than the Lease says: its own silence":                {20 * time.Second, renewed(24 * time.Second), limits, 20 * time.Second},
		"a fence time longer than the Lease's: the Lease waits for it":      {0, renewed(time.Minute), FenceLimits{After: time.Minute, AskAhead: 4 * time.Second}, time.Minute},
		"a fence time longer than the Lease's, a round before it":           {0, renewed(59 * time.Second), FenceLimits{After: time.Minute, AskAhead: 4 * time.Second}, 56 * time.Second},
		"a fence time shorter than the ask ahead: never 0 once it counts":   {0, renewed(23800 * time.Millisecond), FenceLimits{After: 2 * time.Second, AskAhead: 4 * time.Second}, time.Nanosecond},
		"a Lease renewed every 5 s (nodeLeaseDurationSeconds: 20), at 15 s": {0, NodeSilence{Unrenewed: 15 * time.Second, RenewInterval: 5 * time.Second}, limits, 15 * time.Second},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := SilenceFor(tc.own, tc.node, tc.limits); got != tc.want {
				t.Errorf("SilenceFor(%s, %+v, %+v) = %s, want %s", tc.own, tc.node, tc.limits, got, tc.want)
			}
		})
	}
	// Fence, on the Lease alone: asks when peers can tell, stops a round
	// later when alone.
	for _, c := range []struct {
		unrenewed time.Duration
		witnessed Witnessed
		want      FenceAction
	}{
		{23 * time.Second, NotAsked, CarryOn},
		{23800 * time.Millisecond, NotAsked, AskWitnesses},
		{24 * time.Second, Alone, CarryOn},
		{24800 * time.Millisecond, Alone, StopWorker},
		{24800 * time.Millisecond, Vouched, CarryOn},
	} {
		s := Silence{For: SilenceFor(0, renewed(c.unrenewed), limits), Joined: true, Lifted: true, Witnessed: c.witnessed}
		if got := Fence(s, limits); got != c.want {
			t.Errorf("Lease unrenewed %s, %v: Fence = %s, want %s", c.unrenewed, c.witnessed, got, c.want)
		}
	}
}
