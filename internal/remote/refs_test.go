package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// writeRun writes data/<study>/<run>/meta.json with files, creating the
// committed ones (those in committed) in the run folder.
func writeRun(t *testing.T, root, study, run string, files map[string]string, committed ...string) {
	t.Helper()
	dir := filepath.Join(root, "data", study, run)
	os.MkdirAll(dir, 0o755)
	for _, c := range committed {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, c)), 0o755)
		os.WriteFile(filepath.Join(dir, c), []byte("x"), 0o644)
	}
	b, _ := json.Marshal(map[string]any{"study": study, "run_id": run, "files": files})
	if err := os.WriteFile(filepath.Join(dir, "meta.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestReferencedAndSurvey(t *testing.T) {
	root := t.TempDir()
	b1, s1 := blob(100, 40)
	_, s2 := blob(100, 41)
	b3, s3 := blob(100, 42)
	_, rec := blob(1, 43)
	writeRun(t, root, "tls", "r1", map[string]string{"capture.pcapng": s1, "records.csv.gz": rec}, "records.csv.gz")
	writeRun(t, root, "tls", "r2", map[string]string{"capture.pcapng": s1, "b.pcapng": s2})
	writeRun(t, root, "net", "r3", map[string]string{"captures/x.pcapng": s3})
	refs, err := Referenced(root)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		s1: {"data/tls/r1: capture.pcapng", "data/tls/r2: capture.pcapng"},
		s2: {"data/tls/r2: b.pcapng"},
		s3: {"data/net/r3: captures/x.pcapng"},
	}
	if len(refs) != 3 {
		t.Fatalf("refs %+v", refs)
	}
	for i, r := range refs {
		if i > 0 && refs[i-1].Sum >= r.Sum {
			t.Error("refs not sorted by hash")
		}
		if !reflect.DeepEqual(r.By, want[r.Sum]) {
			t.Errorf("%s referenced by %q, want %q", r.Sum[:12], r.By, want[r.Sum])
		}
	}

	st := newStore(t)
	storeBlob(t, st, b1)
	rem := &Dir{Root: t.TempDir()}
	rem.Put(context.Background(), s3, bytes.NewReader(b3), int64(len(b3)))
	got := map[string]State{}
	for _, s := range Survey(context.Background(), st, rem, refs) {
		got[s.Sum] = s.State
	}
	if got[s1] != Present || got[s2] != Absent || got[s3] != RemoteOnly {
		t.Errorf("Survey = %v", got)
	}
	if s := Summary(Survey(context.Background(), st, nil, refs)); s != "3 blobs: 1 present, 2 absent" {
		t.Errorf("Summary without a remote = %q", s)
	}
	if s := Summary(Survey(context.Background(), st, &Dir{Root: "/nonexistent"}, refs)); s != "3 blobs: 1 present, 2 unknown" {
		t.Errorf("Summary with an unreachable remote = %q", s)
	}

	writeRun(t, root, "tls", "bad", map[string]string{"capture.pcapng": "not-a-hash"})
	if _, err := Referenced(root); err == nil {
		t.Error("a missing file whose hash is not a SHA-256 was accepted")
	}
}

// A capture committed gzip'd beside the records is part of the run, not a
// blob of the store.
func TestReferencedSkipsCapturesCommittedGzipped(t *testing.T) {
	root := t.TempDir()
	_, s1 := blob(100, 50)
	_, s2 := blob(100, 51)
	_, gz := blob(10, 52)
	writeRun(t, root, "net", "q", map[string]string{"captures/a.pcapng": s1, "captures/a.pcapng.gz": gz, "captures/b.pcapng": s2}, "captures/a.pcapng.gz")
	refs, err := Referenced(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(refs) != 1 || refs[0].Sum != s2 {
		t.Errorf("refs = %+v, want only captures/b.pcapng", refs)
	}
}
