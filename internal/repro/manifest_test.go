package repro

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// sealedRun commits a run of study "tls" with two files, one in a
// subfolder, and a meta.json naming them and one blob; it returns the
// data directory and the run.
func sealedRun(t *testing.T) (string, *Run) {
	t.Helper()
	data := t.TempDir()
	r, err := NewRun(data, "tls", "quick", mustTime(t, "2026-11-30T12:00:00Z"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(r.Dir, "records.csv"), []byte("1\n2\n"), 0o644)
	os.MkdirAll(filepath.Join(r.Dir, "img"), 0o755)
	os.WriteFile(filepath.Join(r.Dir, "img", "log.txt"), []byte("log\n"), 0o644)
	blob := HashBytes([]byte("capture"))
	meta := `{"files": {"records.csv": "` + HashBytes([]byte("1\n2\n")) + `", "capture.pcapng": "` + blob + `"}}`
	os.WriteFile(filepath.Join(r.Dir, metaFile), []byte(meta), 0o644)
	if err := r.Commit(); err != nil {
		t.Fatal(err)
	}
	return data, r
}

func TestCommitSealsTheRun(t *testing.T) {
	_, r := sealedRun(t)
	b, err := os.ReadFile(filepath.Join(r.Final, ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	if r.Manifest != HashBytes(b) {
		t.Errorf("Run.Manifest = %s, the file hashes to %s", r.Manifest, HashBytes(b))
	}
	m, err := ParseManifest(ManifestFile, b)
	if err != nil {
		t.Fatal(err)
	}
	if m.Run != "tls/"+r.ID || len(m.Files) != 3 || m.Files["img/log.txt"] != HashBytes([]byte("log\n")) ||
		m.Blobs["capture.pcapng"] != HashBytes([]byte("capture")) {
		t.Errorf("manifest = %+v", m)
	}
	if !bytes.Equal(m.Marshal(), b) {
		t.Errorf("Marshal does not give the file back:\n%s\n%s", m.Marshal(), b)
	}
	// The format is sha256sum's: anyone can check the folder without Go.
	if _, err := exec.LookPath("sha256sum"); err != nil {
		t.Skip("sha256sum is not installed: the coreutils check cannot run")
	}
	cmd := exec.Command("sha256sum", "--check", "--strict", "--quiet", ManifestFile)
	cmd.Dir = r.Final
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("sha256sum -c: %v\n%s", err, out)
	}
}

func TestManifestIsWrittenOnceAndMustAgreeWithMeta(t *testing.T) {
	_, r := sealedRun(t)
	if _, err := WriteManifest(r.Final, "tls/"+r.ID); err == nil || !strings.Contains(err.Error(), "sealed already") {
		t.Errorf("second WriteManifest: %v", err)
	}
	for _, tc := range []struct {
		name, meta, want string
		link             bool
	}{
		{"meta.json disagrees", `{"files": {"a.csv": "` + HashBytes([]byte("other")) + `"}}`, "meta.json lists a.csv with sha256", false},
		{"neither file nor blob", `{"files": {"gone.csv": "xyz"}}`, "neither a file of the run nor a content-store SHA-256", false},
		{"bad meta.json", `{`, "not valid JSON", false},
		{"symbolic link", `{}`, "is not a regular file", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, "a.csv"), []byte("a\n"), 0o644)
			os.WriteFile(filepath.Join(dir, metaFile), []byte(tc.meta), 0o644)
			if tc.link {
				os.Symlink("a.csv", filepath.Join(dir, "l.csv"))
			}
			if _, err := WriteManifest(dir, "tls/x"); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
			if _, err := os.Stat(filepath.Join(dir, ManifestFile)); !errors.Is(err, os.ErrNotExist) {
				t.Error("a refused manifest was written")
			}
		})
	}
}

func TestCheckRun(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, run string)
		pin    func(good string) string
		want   string // "" for no problem
	}{
		{"untouched", func(*testing.T, string) {}, nil, ""},
		{"a note in a subfolder", func(t *testing.T, run string) {
			os.WriteFile(filepath.Join(run, "img", NotesFile), []byte("x"), 0o644)
		}, nil, "img/README.md: extra file"},
		{"a file became a folder", func(t *testing.T, run string) {
			os.Remove(filepath.Join(run, "img", "log.txt"))
			os.MkdirAll(filepath.Join(run, "img", "log.txt"), 0o755)
		}, nil, "img/log.txt: missing"},
		{"a file replaced by a symbolic link", func(t *testing.T, run string) {
			os.Remove(filepath.Join(run, "img", "log.txt"))
			os.Symlink("/etc/hostname", filepath.Join(run, "img", "log.txt"))
		}, nil, "img/log.txt: replaced: sealed as a regular file, now a symbolic link"},
		{"an empty folder added", func(t *testing.T, run string) {
			os.MkdirAll(filepath.Join(run, "img", "new"), 0o755)
		}, nil, "img/new: extra: an empty folder"},
		{"a manifest copied from another run", func(t *testing.T, run string) {
			b, _ := os.ReadFile(filepath.Join(run, ManifestFile))
			os.WriteFile(filepath.Join(run, ManifestFile), bytes.Replace(b, []byte("tls/"), []byte("net/"), 1), 0o644)
		}, func(string) string { return "" }, "seals net/"},
		{"wrong pin", func(*testing.T, string) {}, func(good string) string { return strings.Repeat("0", 64) }, "altered: sha256"},
		{"data and manifest edited together", func(t *testing.T, run string) {
			os.WriteFile(filepath.Join(run, "records.csv"), []byte("1\n3\n"), 0o644)
			b, _ := os.ReadFile(filepath.Join(run, ManifestFile))
			b = bytes.Replace(b, []byte(HashBytes([]byte("1\n2\n"))), []byte(HashBytes([]byte("1\n3\n"))), 1)
			os.WriteFile(filepath.Join(run, ManifestFile), b, 0o644)
		}, func(string) string { return "" }, "records.csv: meta.json lists sha256"},
		{"a blob in the store is corrupt", func(t *testing.T, run string) {
			s := OpenStore(filepath.Dir(filepath.Dir(filepath.Dir(run))), "")
			p := s.Path(HashBytes([]byte("capture")))
			os.MkdirAll(filepath.Dir(p), 0o755)
			os.WriteFile(p, []byte("not the capture"), 0o444)
		}, nil, "content-store blob capture.pcapng"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, r := sealedRun(t)
			root := filepath.Dir(data)
			rel, _ := filepath.Rel(root, r.Final)
			tc.change(t, r.Final)
			pin, by := r.Manifest, "spec [runs] quick"
			if tc.pin != nil {
				if pin = tc.pin(pin); pin == "" {
					by = ""
				}
			}
			rc := CheckRun(root, filepath.ToSlash(rel), pin, by, nil, nil)
			got := ""
			for _, p := range rc.Problems {
				got += p.String() + "\n"
			}
			if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
				t.Errorf("problems:\n%s\nwant %q", got, tc.want)
			}
			if len(rc.Problems) > 1 && tc.name == "a file replaced by a symbolic link" {
				t.Errorf("one change, %d findings (self-contradictory):\n%s", len(rc.Problems), got)
			}
		})
	}
}

// TestParseManifestLineNumbers: a bad line is reported with its own line
// number in the manifest, once, not with the ":1:" of the one-line parse.
func TestParseManifestLineNumbers(t *testing.T) {
	head := "# pqrepro run manifest tls/20261130T120000Z-quick\n" + strings.Repeat("b", 64) + "  meta.json\n"
	for _, tc := range []struct{ in, want string }{
		{head + "\nnot a line\n", "m:4: not a `sha256sum` line (not a `sha256sum` line (want"},
		{head + strings.Repeat("c", 64) + "  ../x\n", "m:3: not a `sha256sum` line (path \"../x\""},
		{head + "# blob zz  capture\n", "m:3: a blob line is"},
	} {
		_, err := ParseManifest("m", []byte(tc.in))
		if err == nil || !strings.HasPrefix(err.Error(), tc.want[:4]) || strings.Contains(err.Error(), "m:1:") {
			t.Errorf("ParseManifest: %v, want it to start %q and name no other line", err, tc.want)
		}
	}
}

func FuzzParseManifest(f *testing.F) {
	f.Add([]byte("# pqrepro run manifest tls/20261130T120000Z-quick\n# blob " + strings.Repeat("a", 64) + "  capture.pcapng\n" + strings.Repeat("b", 64) + "  meta.json\n"))
	f.Add([]byte("# pqrepro run manifest x/y\n" + strings.Repeat("b", 64) + "  ../escape\n"))
	f.Add([]byte(""))
	f.Add([]byte("# pqrepro run manifest tls/x\n# blob " + strings.Repeat("a", 64) + "  c\n# blob-size " + strings.Repeat("a", 64) + " 1000\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ParseManifest("m", b)
		if err != nil {
			return
		}
		// What parses renders to something that parses to the same.
		m2, err := ParseManifest("m", m.Marshal())
		if err != nil || !bytes.Equal(m.Marshal(), m2.Marshal()) {
			t.Fatalf("round trip: %v\n%q\n%q", err, m.Marshal(), b)
		}
		for sum, n := range m.BlobSizes {
			if n < 0 || !slices.Contains(slices.Collect(maps.Values(m.Blobs)), sum) {
				t.Fatalf("accepted size %d of %q, which no blob line names", n, sum)
			}
		}
		for p := range m.Files {
			if strings.HasPrefix(p, "../") || strings.HasPrefix(p, "/") || p == ManifestFile {
				t.Fatalf("accepted path %q", p)
			}
		}
	})
}

// TestHashCacheSeesInPlaceEdits: an edit that keeps the size, the inode
// and (set back by hand) the modification time is still seen, through
// the status-change time.
func TestHashCacheSeesInPlaceEdits(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f.csv")
	os.WriteFile(p, []byte("12345\n"), 0o644)
	h := OpenHashCache(filepath.Join(dir, "cache.json"))
	first, err := h.Hash(p)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(p)
	time.Sleep(10 * time.Millisecond) // a coarse clock must tick for ctime to differ
	f, _ := os.OpenFile(p, os.O_WRONLY, 0)
	f.WriteAt([]byte("9"), 0)
	f.Close()
	os.Chtimes(p, st.ModTime(), st.ModTime())
	h.Save()
	h = OpenHashCache(filepath.Join(dir, "cache.json"))
	second, err := h.Hash(p)
	if err != nil {
		t.Fatal(err)
	}
	if second == first || second != HashBytes([]byte("92345\n")) || h.Reads != 1 {
		t.Errorf("cache returned %s (first %s, reads %d) after an in-place edit with the mtime set back", second, first, h.Reads)
	}
}

func TestRawDataIsImmutable(t *testing.T) {
	tr := newTree(t)
	tr.build()
	before := snapshot(t, tr.root)
	tr.write("data/b/records.csv", "11\n")
	_, err := tr.engine().Build(context.Background())
	if err == nil || !strings.Contains(err.Error(), "refusing to rewrite SHA256SUMS") || !strings.Contains(err.Error(), "data/b/records.csv: content differs") {
		t.Fatalf("build over changed raw data: %v", err)
	}
	tr.write("data/b/records.csv", "10\n")
	if after := snapshot(t, tr.root); !equalMaps(before, after) {
		t.Error("the refused build changed the tree")
	}
	// A new run is added; a run removed as a whole is dropped.
	tr.write("data/c/records.csv", "5\n")
	tr.build()
	if !strings.Contains(tr.read(SumsFile), "data/c/records.csv") {
		t.Error("the new raw file is not listed")
	}
	os.RemoveAll(filepath.Join(tr.root, "data/c"))
	tr.build()
	if strings.Contains(tr.read(SumsFile), "data/c/") {
		t.Error("the removed run is still listed")
	}
	// A file removed from a run that is still there is refused.
	os.Remove(filepath.Join(tr.root, "data/b/records.csv"))
	tr.write("data/b/other.csv", "1\n")
	if _, err := tr.engine().Build(context.Background()); err == nil || !strings.Contains(err.Error(), "data/b/records.csv: missing") {
		t.Errorf("build after a file of a run was removed: %v", err)
	}
}

func TestVerifyKeepsGoingPastAFailingStage(t *testing.T) {
	tr := newTree(t)
	e := tr.engine()
	other := &Stage{Name: "other", Code: []string{"render"}, Inputs: []string{"data/a/records.csv"}, Outputs: []string{"results/other.txt"},
		Run: func(ctx context.Context, env *Env) error { return env.WriteFile("results/other.txt", []byte("x\n")) }}
	e.Stages = append(e.Stages, other)
	if _, err := e.Build(context.Background()); err != nil {
		t.Fatal(err)
	}
	tr.write("results/other.txt", "changed\n")
	tr.failAt = "sum"
	rep, err := e.Verify(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range rep.Problems {
		got = append(got, p.String())
	}
	all := strings.Join(got, "\n")
	for _, want := range []string{
		"paper/generated/report.tex: not re-derived: stage report did not run",
		"results/sum.txt: not re-derived: stage sum failed",
		"differs from what stage other re-derives",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("problems lack %q:\n%s", want, all)
		}
	}
	if len(rep.StageErrors) != 1 || rep.StageErrors[0].Stage != "sum" || !strings.Contains(rep.StageErrors[0].Error(), "simulated failure") {
		t.Errorf("stage errors = %v", rep.StageErrors)
	}
}

// TestBlobCommittedGzippedInTheRun: a capture committed as <name>.gz in
// its run is counted as such, not as absent from the store.
func TestBlobCommittedGzippedInTheRun(t *testing.T) {
	data := t.TempDir()
	r, err := NewRun(data, "net", "quick", mustTime(t, "2026-11-30T12:00:00Z"))
	if err != nil {
		t.Fatal(err)
	}
	gz := []byte("gzip bytes")
	os.WriteFile(filepath.Join(r.Dir, "capture.pcapng.gz"), gz, 0o644)
	meta := `{"files": {"capture.pcapng.gz": "` + HashBytes(gz) + `", "capture.pcapng": "` + HashBytes([]byte("capture")) + `", "other.pcapng": "` + HashBytes([]byte("other")) + `"}}`
	os.WriteFile(filepath.Join(r.Dir, metaFile), []byte(meta), 0o644)
	if err := r.Commit(); err != nil {
		t.Fatal(err)
	}
	rc := CheckRun(filepath.Dir(data), filepath.Base(data)+"/net/"+r.ID, r.Manifest, "test", nil, &Store{Dir: t.TempDir()})
	if len(rc.Problems) != 0 {
		t.Fatalf("problems: %v", rc.Problems)
	}
	if rc.BlobsInRun != 1 || rc.BlobsAbsent != 1 {
		t.Errorf("in run %d (want 1: capture.pcapng.gz), absent %d (want 1: other.pcapng)", rc.BlobsInRun, rc.BlobsAbsent)
	}
}

// TestManifestRecordsBlobSizes: a run sealed while its blob is in the
// store records the blob's size; the size round-trips, older manifests
// (no size line) still parse, and malformed or stray size lines are
// refused with their line number.
func TestManifestRecordsBlobSizes(t *testing.T) {
	data := t.TempDir()
	store := &Store{Dir: filepath.Join(t.TempDir(), "store")}
	src := filepath.Join(t.TempDir(), "capture")
	os.WriteFile(src, []byte("capture bytes"), 0o644)
	blob, err := store.Put(src)
	if err != nil {
		t.Fatal(err)
	}
	absent := HashBytes([]byte("not stored"))
	r, err := NewRun(data, "tls", "quick", mustTime(t, "2026-11-30T12:00:00Z"))
	if err != nil {
		t.Fatal(err)
	}
	r.Store = store
	meta := `{"files": {"capture.pcapng": "` + blob + `", "other.pcapng": "` + absent + `"}}`
	os.WriteFile(filepath.Join(r.Dir, metaFile), []byte(meta), 0o644)
	if err := r.Commit(); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(r.Final, ManifestFile))
	if !strings.Contains(string(b), "\n# blob-size "+blob+" 13\n") {
		t.Fatalf("manifest records no size for the stored blob:\n%s", b)
	}
	m, err := ParseManifest("m", b)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.BlobSizes) != 1 || m.BlobSizes[blob] != 13 {
		t.Errorf("BlobSizes = %v, want only %s: 13 (the absent blob has no size)", m.BlobSizes, blob[:12])
	}
	if !bytes.Equal(m.Marshal(), b) {
		t.Errorf("Marshal does not give the file back:\n%s\n%s", m.Marshal(), b)
	}
	// A manifest of before blob-size lines parses, with no sizes.
	old := strings.ReplaceAll(string(b), "# blob-size "+blob+" 13\n", "")
	if m, err := ParseManifest("m", []byte(old)); err != nil || len(m.BlobSizes) != 0 {
		t.Errorf("manifest without sizes: %v, sizes %v", err, m)
	}
	head := "# pqrepro run manifest tls/x\n# blob " + blob + "  capture.pcapng\n"
	for _, tc := range []struct{ line, want string }{
		{"# blob-size " + blob + " -1", "m:3: a blob-size line"},
		{"# blob-size " + blob + " 013", "m:3: a blob-size line"},
		{"# blob-size " + blob + " +13", "m:3: a blob-size line"},
		{"# blob-size " + blob + " 99999999999999999999", "m:3: a blob-size line"},
		{"# blob-size " + blob + "  13", "m:3: a blob-size line"},
		{"# blob-size " + blob[:63] + " 13", "m:3: a blob-size line"},
		{"# blob-size " + absent + " 13", "m:3: a size is recorded for blob"},
		{"# blob-size " + blob + " 13\n# blob-size " + blob + " 13", "m:4: the size of blob"},
	} {
		if _, err := ParseManifest("m", []byte(head+tc.line+"\n")); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.line, err, tc.want)
		}
	}
}

// TestCommitFindsTheRepositorysStore: without Run.Store, Commit reads
// blob sizes from the store of the repository the run belongs to
// (<root>/.store for <root>/data/<study>/<run>), as a study's run does.
func TestCommitFindsTheRepositorysStore(t *testing.T) {
	root := t.TempDir()
	src := filepath.Join(t.TempDir(), "capture")
	os.WriteFile(src, []byte("0123456789"), 0o644)
	blob, err := OpenStore(root, "").Put(src)
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewRun(filepath.Join(root, "data"), "net", "quick", mustTime(t, "2026-11-30T12:00:00Z"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(r.Dir, metaFile), []byte(`{"files": {"c.pcapng": "`+blob+`"}}`), 0o644)
	if err := r.Commit(); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(r.Final, ManifestFile))
	if !strings.Contains(string(b), "# blob-size "+blob+" 10\n") {
		t.Errorf("manifest without the blob's size:\n%s", b)
	}
}
