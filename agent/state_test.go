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
