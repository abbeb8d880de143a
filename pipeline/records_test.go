package pipeline

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"pqrepro/internal/repro"
	"pqrepro/internal/settings"
)

// repoRoot is this repository, whose committed runs the tests read.
func repoRoot(t testing.TB) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// The engine re-derives every pinned run's records, not only those of the
// profile it analyses: with the full runs analysed, the quick runs' records
// stages are still there, so verify checks their committed captures.
func TestEngineHasRecordsStagesOfEveryPinnedRun(t *testing.T) {
	root := repoRoot(t)
	e, err := Engine(Config{Root: root, Log: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]*repro.Stage{}
	for _, s := range e.Stages {
		names[s.Name] = s
	}
	for _, st := range Studies() {
		if st.Records == nil {
			continue
		}
		for _, p := range fullFirst {
			run, err := st.pinned(root, p)
			if err != nil || run == "" {
				continue
			}
			s := names[st.Name+":records-"+p]
			if s == nil {
				t.Errorf("no stage %s:records-%s for the pinned run %s", st.Name, p, run)
				continue
			}
			if s.Confirms != run+"/records.csv.gz" || s.Outputs[0] != recordsOut(st.Name, p) {
				t.Errorf("%s: confirms %s, writes %v", s.Name, s.Confirms, s.Outputs)
			}
		}
	}
}

// rederiveQuick runs the records stage of each study's pinned quick run in
// a scratch tree holding only that run (without its committed captures
// unless captures), and returns the notices.
func rederiveQuick(t testing.TB, root string, captures bool) string {
	var notes bytes.Buffer
	for _, st := range Studies() {
		if st.Records == nil {
			continue
		}
		run, err := st.pinned(root, settings.Quick)
		if err != nil || run == "" {
			continue
		}
		tree := t.TempDir()
		e := &repro.Engine{Root: root, Stages: []*repro.Stage{st.Records(root, settings.Quick, run, settings.Defaults())}}
		files, err := e.Sources(nil)
		if err != nil {
			t.Fatal(err)
		}
		if !captures {
			files = slices.DeleteFunc(files, func(f string) bool { return strings.HasSuffix(f, ".pcapng.gz") })
		}
		if err := e.CopyFiles(tree, files); err != nil {
			t.Fatal(err)
		}
		fresh := &repro.Engine{Root: tree, CodeRoot: root, Stages: e.Stages, Log: io.Discard, Notices: &notes}
		if _, err := fresh.Build(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	return notes.String()
}

// The committed quick runs' captures re-derive their records byte for byte.
func TestCommittedQuickRunsRederive(t *testing.T) {
	root := repoRoot(t)
	if _, err := os.Stat(filepath.Join(root, ".git")); err != nil {
		t.Skip("skipped: not in a checkout of the repository (its committed runs are the test data)")
	}
	notes := rederiveQuick(t, root, true)
	if strings.Contains(notes, "not present") || strings.Count(notes, "equal to the recorded ones byte for byte") < 2 {
		t.Errorf("the quick runs' committed captures were not all re-derived:\n%s", notes)
	}
	// Without them (a clone that lost them): one line per run, no
	// failure, and a line per run whose trimmed transfer captures in
	// columns (.pcapng.pqcol, kept: they are not full captures) still
	// re-derive its transfer.csv.gz.
	notes = rederiveQuick(t, root, false)
	trimmed := strings.Count(notes, "trimmed transfer captures (sha256:")
	if strings.Count(notes, "not present: records taken as recorded") != 2 || strings.Count(notes, "\n") != 2+trimmed ||
		strings.Count(notes, "transfer.csv.gz re-derived from") != trimmed || trimmed == 0 {
		t.Errorf("without the captures, want one line per run and one per run with trimmed transfer captures:\n%s", notes)
	}
}

// BenchmarkRederiveQuickRuns is the time the quick runs' records stages
// take in verify with their captures present and absent (a scratch tree
// per iteration, so each stage runs from scratch).
func BenchmarkRederiveQuickRuns(b *testing.B) {
	root := repoRoot(b)
	for _, captures := range []bool{true, false} {
		name := map[bool]string{true: "present", false: "absent"}[captures]
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				rederiveQuick(b, root, captures)
			}
		})
	}
}

// TestStagesOverRecordsFirst: a study's stages over a run are its records
// stage of that run, then StagesFor's, which hold none of their own; a
// study without Records has StagesFor's alone.
func TestStagesOverRecordsFirst(t *testing.T) {
	root := repoRoot(t)
	for _, s := range Studies() {
		run, err := s.pinned(root, settings.Quick)
		if err != nil || run == "" {
			t.Fatalf("study %s has no pinned quick run (%v): the test needs one", s.Name, err)
		}
		st, err := s.stagesOver(root, settings.Quick, run, settings.Defaults())
		if err != nil {
			t.Fatal(err)
		}
		own, err := s.StagesFor(root, settings.Quick, run, settings.Defaults())
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range own {
			if strings.Contains(o.Name, ":records-") {
				t.Errorf("study %s: StagesFor holds its records stage %s; stagesOver adds it", s.Name, o.Name)
			}
		}
		want := len(own)
		if s.Records != nil {
			want++
			if len(st) == 0 || st[0].Name != s.Name+":records-quick" || st[0].Confirms != run+"/records.csv.gz" {
				t.Errorf("study %s: first stage %v, want its records stage of %s", s.Name, st[0].Name, run)
			}
		}
		if len(st) != want {
			t.Errorf("study %s: %d stages over %s, want %d", s.Name, len(st), run, want)
		}
	}
}
