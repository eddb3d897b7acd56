package nodeloss

import (
	"testing"
	"time"
)

func TestLost(t *testing.T) {
	const bound, deferred = 30 * time.Second, 11 * time.Minute
	cases := []struct {
		name                 string
		silence, alone       time.Duration
		silentNodes, witness int
		want                 bool
	}{
		{"alone past the bound", time.Minute, time.Minute, 1, 1, true},
		{"alone for less than the bound", 20 * time.Second, 20 * time.Second, 1, 1, false},
		{"silent past the bound, shared until less than a bound ago", time.Minute, 10 * time.Second, 1, 1, false},
		{"silent past the bound, shared until a bound ago", time.Minute, bound, 1, 1, true},
		{"shared now, past the bound", time.Minute, time.Minute, 2, 1, false},
		{"shared now, past the deferred bound", deferred, time.Second, 2, 1, true},
		{"shared before, past the deferred bound", deferred, time.Second, 1, 1, true},
		{"as many silent nodes as witnesses: not shared", time.Minute, time.Minute, 2, 2, true},
		{"no witnesses: the silence counts whole", time.Minute, time.Second, 3, 0, true},
		{"no witnesses, less than the bound", 20 * time.Second, 20 * time.Second, 1, 0, false},
	}
	for _, tc := range cases {
		if got := Lost(tc.silence, tc.alone, bound, deferred, tc.silentNodes, tc.witness); got != tc.want {
			t.Errorf("%s: Lost = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// countedFromTheStart is the rule that counts every silence from its
// start, which the nodeloss checker explores: Lost must declare a member
// lost only where it does, so that every run Lost allows is one the
// checker explored (a declaration there may come at any later moment).
func countedFromTheStart(silence, bound, deferred time.Duration, silentNodes, witnesses int) bool {
	if witnesses > 0 && silentNodes > witnesses {
		return silence >= deferred
	}
	return silence >= bound
}

func TestLostDeclaresOnlyWhereCountingFromTheStartDoes(t *testing.T) {
	const bound, deferred = 30 * time.Second, 11 * time.Minute
	durations := []time.Duration{0, time.Second, bound - time.Second, bound, bound + time.Second, time.Minute, deferred - time.Second, deferred, deferred + time.Second}
	for _, silence := range durations {
		for _, alone := range durations {
			if alone > silence {
				continue
			}
			for silentNodes := 0; silentNodes <= 3; silentNodes++ {
				for witnesses := 0; witnesses <= 2; witnesses++ {
					if Lost(silence, alone, bound, deferred, silentNodes, witnesses) && !countedFromTheStart(silence, bound, deferred, silentNodes, witnesses) {
						t.Errorf("Lost(%s, %s, %d silent, %d witnesses) declares a member lost that counting from the start would not", silence, alone, silentNodes, witnesses)
					}
				}
			}
		}
	}
}

func TestAlone(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	const interval = 10 * time.Second
	ago := func(d time.Duration) time.Time { return now.Add(-d) }
	spell := func(from, to time.Duration) Spell {
		return Spell{From: ago(from), To: ago(to), RenewInterval: interval}
	}
	cases := []struct {
		name    string
		silence time.Duration
		others  []Spell
		want    time.Duration
	}{
		{"no other node came back", time.Minute, nil, time.Minute},
		{"another came back after both were suspects", time.Minute, []Spell{spell(70*time.Second, 5*time.Second)}, 5 * time.Second},
		{"the latest return counts", time.Minute, []Spell{spell(70*time.Second, 20*time.Second), spell(65*time.Second, 5*time.Second)}, 5 * time.Second},
		{"another came back before this silence began", time.Minute, []Spell{spell(3*time.Minute, 2*time.Minute)}, time.Minute},
		{"another came back before this node was a suspect", time.Minute, []Spell{spell(2*time.Minute, 50*time.Second)}, time.Minute},
		{"another that was no suspect itself", time.Minute, []Spell{spell(20*time.Second, 6*time.Second)}, time.Minute},
		{"another that began its silence after this one, both suspects at its return", time.Minute, []Spell{spell(40*time.Second, 10*time.Second)}, 10 * time.Second},
	}
	for _, tc := range cases {
		if got := Alone(now, tc.silence, interval, tc.others); got != tc.want {
			t.Errorf("%s: Alone = %s, want %s", tc.name, got, tc.want)
		}
	}
}
