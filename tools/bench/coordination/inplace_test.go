package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// The reconcile that wrote a sync is the last confirmed one to decide
// before the sync's log line, after the trigger.
func TestSyncReconcileReadsTheLastConfirmedDecisionBeforeTheSync(t *testing.T) {
	log := filepath.Join(t.TempDir(), "controller.log")
	lines := `{"level":"debug","ts":"2026-01-01T12:00:00.5Z","msg":"Reconciling","confirmed":true,"decidedIn":0.1,"freshRead":0.05}
{"level":"debug","ts":"2026-01-01T12:00:02Z","msg":"Reconciling","confirmed":true,"decidedIn":0.2,"freshRead":0.1}
{"level":"debug","ts":"2026-01-01T12:00:03Z","msg":"Reconciling","confirmed":false,"decidedIn":0.01,"freshRead":0}
{"level":"debug","ts":"2026-01-01T12:00:04Z","msg":"Reconciling","confirmed":true,"decidedIn":1.5,"freshRead":1.25}
not JSON: a line the controller's runtime printed
{"level":"info","ts":"2026-01-01T12:00:04.1Z","msg":"in-place group restart 1 completed","reason":"InPlaceRestartCompleted"}
{"level":"debug","ts":"2026-01-01T12:00:05Z","msg":"Reconciling","confirmed":true,"decidedIn":0.3,"freshRead":0.2}
`
	if err := os.WriteFile(log, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	at := func(s float64) time.Time {
		return time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC).Add(time.Duration(s * float64(time.Second)))
	}
	began, decided, freshRead, err := syncReconcile(&process{log: log}, at(1), at(4.1))
	if err != nil {
		t.Fatal(err)
	}
	if !began.Equal(at(2.5)) || !decided.Equal(at(4)) || freshRead != 1.25 {
		t.Errorf("began %s, decided %s, fresh read %.2f s; want %s, %s, 1.25 s", began, decided, freshRead, at(2.5), at(4))
	}
	if _, _, _, err := syncReconcile(&process{log: log}, at(4.5), at(4.6)); err == nil {
		t.Error("found a reconcile where the log has none")
	}
}
