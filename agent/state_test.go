package agent

import "testing"

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
