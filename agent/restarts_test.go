package agent

import (
	"os"
	"path/filepath"
	"testing"
)

// The record tells the agents of one Pod apart: the first, which finds no
// record; one after a restart of the Pod's containers, which finds its
// predecessor's; and the same agent after it restarted its worker's
// process.
func TestRestartsRecordTellsTheTiersApart(t *testing.T) {
	dir := t.TempDir()
	step := func(r *restartsRecord, e int32, want string) {
		t.Helper()
		if got := r.annotationFor(e); got != want {
			t.Fatalf("the join of epoch %d reports %q, want %q", e, got, want)
		}
		if err := r.joined(e); err != nil {
			t.Fatal(err)
		}
		if got := r.annotationFor(e); got != "" {
			t.Errorf("a join of epoch %d again (a confirmation) reports %q, want nothing", e, got)
		}
	}

	first, err := loadRestartsRecord(dir)
	if err != nil {
		t.Fatal(err)
	}
	step(&first, 1, "process=0,pod=0,epoch=1,tier=new")
	first.restartingProcess()
	step(&first, 2, "process=1,pod=0,epoch=2,tier=process")

	second, err := loadRestartsRecord(dir)
	if err != nil {
		t.Fatal(err)
	}
	step(&second, 3, "process=1,pod=1,epoch=3,tier=pod")

	deniedOnce := func(r *restartsRecord) {
		r.restartingProcess()
		r.denied()
	}
	// A denied join goes again without the report; its restart still counts.
	deniedOnce(&second)
	step(&second, 4, "")
	second.restartingProcess()
	step(&second, 5, "process=3,pod=1,epoch=5,tier=process")
}

func TestRestartsRecordWithoutStateDirectoryReportsNothing(t *testing.T) {
	r, err := loadRestartsRecord("")
	if err != nil {
		t.Fatal(err)
	}
	r.restartingProcess()
	if got := r.annotationFor(1); got != "" {
		t.Errorf("reports %q without a state directory, want nothing", got)
	}
}

// A record the agent cannot read still says the Pod's containers
// restarted; only its counts start again.
func TestRestartsRecordUnreadable(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, restartsRecordFile), []byte("three\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := loadRestartsRecord(dir)
	if err == nil {
		t.Error("no error for a record that is no report")
	}
	if got, want := r.annotationFor(4), "process=0,pod=1,epoch=4,tier=pod"; got != want {
		t.Errorf("reports %q, want %q", got, want)
	}
}
