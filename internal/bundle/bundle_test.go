package bundle

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"pqrepro/internal/provenance"
	"pqrepro/internal/repro"
)

func TestByteIdentical(t *testing.T) {
	f := newFixture(t)
	a := mustWrite(t, f.opts())
	o := f.opts()
	o.OutDir = t.TempDir()
	b := mustWrite(t, o)
	ab, _ := os.ReadFile(a.Path)
	bb, _ := os.ReadFile(b.Path)
	if !bytes.Equal(ab, bb) {
		t.Fatalf("two bundles of one commit differ: %s vs %s", a.SHA256, b.SHA256)
	}
	if a.SHA256 != repro.HashBytes(ab) || a.Size != int64(len(ab)) {
		t.Errorf("report says sha256 %s size %d, the file has %s, %d", a.SHA256, a.Size, repro.HashBytes(ab), len(ab))
	}
	if filepath.Base(a.Path) != "pqrepro-"+short(a.Commit)+".tar.gz" {
		t.Errorf("archive name %s, want pqrepro-<12-hex commit>.tar.gz", filepath.Base(a.Path))
	}

	// A different SOURCE_DATE_EPOCH changes the bytes.
	o = f.opts()
	o.OutDir = t.TempDir()
	o.Epoch = testEpoch.Add(24 * time.Hour)
	c := mustWrite(t, o)
	if c.SHA256 == a.SHA256 {
		t.Error("changing SOURCE_DATE_EPOCH did not change the bundle")
	}

	// The zero Epoch is repro.EpochOr's default (SOURCE_DATE_EPOCH's default).
	o.OutDir, o.Epoch = t.TempDir(), time.Time{}
	d := mustWrite(t, o)
	o.OutDir, o.Epoch = t.TempDir(), repro.EpochOr(time.Time{})
	if e := mustWrite(t, o); d.SHA256 != e.SHA256 {
		t.Error("the zero Epoch gave another bundle than the default date")
	}
	// An epoch a tar header cannot hold is refused.
	o.OutDir, o.Epoch = t.TempDir(), time.Unix(1<<34, 0)
	if _, err := Write(context.Background(), o); err == nil || !strings.Contains(err.Error(), "SOURCE_DATE_EPOCH") {
		t.Errorf("epoch beyond a tar header: err = %v", err)
	}
}

func TestEntries(t *testing.T) {
	f := newFixture(t)
	rep := mustWrite(t, f.opts())
	zh, ms := readArchive(t, rep.Path)
	if zh.Name != "" || !zh.ModTime.IsZero() || zh.Comment != "" || len(zh.Extra) != 0 {
		t.Errorf("gzip header carries name %q, time %v, comment %q, extra %x", zh.Name, zh.ModTime, zh.Comment, zh.Extra)
	}
	prefix := "pqrepro-" + short(rep.Commit) + "/"
	var names []string
	byName := map[string]member{}
	for _, m := range ms {
		h := m.Hdr
		names = append(names, h.Name)
		byName[strings.TrimPrefix(h.Name, prefix)] = m
		if !strings.HasPrefix(h.Name, prefix) {
			t.Errorf("%s is outside the top folder %s", h.Name, prefix)
		}
		if h.Uid != 0 || h.Gid != 0 || h.Uname != "" || h.Gname != "" {
			t.Errorf("%s: owner %d/%d %q/%q, want 0/0 without names", h.Name, h.Uid, h.Gid, h.Uname, h.Gname)
		}
		if !h.ModTime.Equal(testEpoch) {
			t.Errorf("%s: mtime %v, want %v", h.Name, h.ModTime, testEpoch)
		}
		if !h.AccessTime.IsZero() || !h.ChangeTime.IsZero() {
			t.Errorf("%s: access or change time recorded", h.Name)
		}
		for k := range h.PAXRecords {
			if k != "path" && k != "linkpath" {
				t.Errorf("%s: pax record %s: only long or non-ASCII paths may need pax", h.Name, k)
			}
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if h.Mode != 0o755 {
				t.Errorf("directory %s: mode %o", h.Name, h.Mode)
			}
		case tar.TypeReg:
			want := int64(0o644)
			if strings.HasSuffix(h.Name, ".ci/run") {
				want = 0o755
			}
			if h.Mode != want {
				t.Errorf("%s: mode %o, want %o", h.Name, h.Mode, want)
			}
		case tar.TypeSymlink:
			if !strings.HasSuffix(h.Name, "docs/latest.md") || h.Linkname != "análise.md" || h.Mode != 0o777 {
				t.Errorf("symbolic link %s -> %s mode %o", h.Name, h.Linkname, h.Mode)
			}
		default:
			t.Errorf("%s: unexpected type %c", h.Name, h.Typeflag)
		}
	}
	if !slices.IsSorted(names) {
		t.Errorf("entries are not sorted by path: %q", names)
	}
	if names[0] != prefix {
		t.Errorf("first entry %q, want the top folder %q", names[0], prefix)
	}
	for _, want := range []string{"main.go", ".ci/run", "CITATION.cff", LicenseFile, DataLicenseFile, "SHA256SUMS", f.RunDir + "/meta.json", f.RunDir + "/records.csv",
		"docs/análise.md", "docs/" + strings.Repeat("x", 120) + ".md", blobPath(f.Capture), ManifestFile, ArtifactFile, BundleSums} {
		if _, ok := byName[want]; !ok {
			t.Errorf("bundle lacks %s", want)
		}
	}
	if got := repro.HashBytes(byName[blobPath(f.Capture)].Data); got != f.Capture {
		t.Errorf("the archived capture hashes to %s, want %s", got, f.Capture)
	}

	// BUNDLE.SHA256SUMS lists every file with its content's hash.
	sums, err := repro.ParseSums(BundleSums, byName[BundleSums].Data)
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, s := range sums {
		listed[s.Path] = true
		m, ok := byName[s.Path]
		if !ok {
			t.Errorf("%s lists %s, which is not in the bundle", BundleSums, s.Path)
		} else if repro.HashBytes(m.Data) != s.SHA256 {
			t.Errorf("%s: listed %s, content %s", s.Path, s.SHA256, repro.HashBytes(m.Data))
		}
	}
	for n, m := range byName {
		if m.Hdr.Typeflag == tar.TypeReg && n != BundleSums && !listed[n] {
			t.Errorf("%s is not listed in %s", n, BundleSums)
		}
	}

	var man Manifest
	if err := json.Unmarshal(byName[ManifestFile].Data, &man); err != nil {
		t.Fatal(err)
	}
	head := runGit(t, f.Root, "rev-parse", "HEAD")
	if man.Commit != head || man.Dirty || man.SourceDateEpoch != testEpoch.Unix() {
		t.Errorf("manifest commit %s dirty %v epoch %d; want %s, false, %d", man.Commit, man.Dirty, man.SourceDateEpoch, head, testEpoch.Unix())
	}
	if len(man.Blobs) != 1 || man.Blobs[0].SHA256 != f.Capture || man.Blobs[0].Size != 13000 {
		t.Errorf("manifest blobs %+v", man.Blobs)
	}
	if len(man.Runs) != 1 || man.Runs[0].Seconds != 125 || man.Runs[0].BlobBytes != 13000 {
		t.Errorf("manifest runs %+v", man.Runs)
	}
	if man.Tools["go"] == "" || man.Tools["git"] == "" {
		t.Errorf("manifest tools %v lack go or git", man.Tools)
	}

	art := string(byName[ArtifactFile].Data)
	for _, want := range []string{
		"commit `" + head + "`, a clean checkout",
		"go 1.27.3 (from go.mod)",
		"### From the README: Requirements", "Go 1.27.3 and root for captures.",
		"### From docs/hardware.md: Hardware notes", "No board was attached.",
		"the code BSD-3-Clause, the data and the outputs derived from them CC BY 4.0 | `LICENSE`, `LICENSE-DATA`",
		"| `tls:run` | `" + f.RunDir + "` | quick | 2026-01-01T00:00:00Z | 2 min 05 s | Test CPU, 2 cores |",
		"**Not measured**", "A MAP, NO VERDICTS",
		"A1a: ML-DSA-87 + X25519 has a higher median Ths (published: higher, significant)",
		"| `tls:run` | Study A: \"A Test Paper\" (Authors) |", "| `build` | all |",
	} {
		if !strings.Contains(art, want) {
			t.Errorf("ARTIFACT.md lacks %q", want)
		}
	}
	if strings.Contains(art, "not copied") || strings.Contains(art, "Not here") {
		t.Error("ARTIFACT.md copied a README section it should not")
	}
	if len(rep.Warnings) != 1 || !strings.Contains(rep.Warnings[0], DefaultTimingsFile) {
		t.Errorf("warnings %q, want one about the missing timings file", rep.Warnings)
	}
}

// A clone has no content store: the bundle must still be written, list
// the absent blobs in its appendix and manifest with how to fetch them,
// and be the same bytes when written twice.
func TestMissingBlob(t *testing.T) {
	f := newFixture(t)
	if err := os.Remove(f.Store.Path(f.Capture)); err != nil {
		t.Fatal(err)
	}
	rep := mustWrite(t, f.opts())
	if rep.Blobs != 0 || rep.Absent != 1 {
		t.Errorf("report: %d blobs, %d absent; want 0 and 1", rep.Blobs, rep.Absent)
	}
	_, ms := readArchive(t, rep.Path)
	byName := map[string]member{}
	for _, m := range ms {
		byName[strings.SplitN(m.Hdr.Name, "/", 2)[1]] = m
		if strings.Contains(m.Hdr.Name, f.Capture[2:]) {
			t.Errorf("the archive holds %s, a blob that is not in the store", m.Hdr.Name)
		}
	}
	art := string(byName[ArtifactFile].Data)
	for _, want := range []string{"### Captures not in this bundle", f.Capture, f.RunDir + ": capture.pcapng", FetchCommand} {
		if !strings.Contains(art, want) {
			t.Errorf("ARTIFACT.md lacks %q", want)
		}
	}
	var man Manifest
	if err := json.Unmarshal(byName[ManifestFile].Data, &man); err != nil {
		t.Fatal(err)
	}
	if len(man.AbsentBlobs) != 1 || man.AbsentBlobs[0].SHA256 != f.Capture || len(man.Blobs) != 0 {
		t.Errorf("manifest: blobs %+v, absent %+v", man.Blobs, man.AbsentBlobs)
	}
	if !slices.ContainsFunc(rep.Warnings, func(w string) bool { return strings.Contains(w, FetchCommand) }) {
		t.Errorf("warnings %q do not say how to fetch the absent blob", rep.Warnings)
	}
	o := f.opts()
	o.OutDir = t.TempDir()
	if again := mustWrite(t, o); again.SHA256 != rep.SHA256 {
		t.Errorf("two bundles without the blob differ: %s, %s", rep.SHA256, again.SHA256)
	}
}

// A capture committed compressed in its run folder (name.gz) is data of
// the commit, not a store blob: it is neither archived from the store nor
// listed as absent.
func TestCommittedCapture(t *testing.T) {
	f := newFixture(t)
	if err := os.Remove(f.Store.Path(f.Capture)); err != nil {
		t.Fatal(err)
	}
	writeFile(t, f.Root, f.RunDir+"/capture.pcapng.gz", "gzip'd capture bytes", 0o644)
	f.commit(t, "capture in git")
	rep := mustWrite(t, f.opts())
	if rep.Blobs != 0 || rep.Absent != 0 {
		t.Errorf("report: %d blobs, %d absent; want 0 and 0 (the capture is committed)", rep.Blobs, rep.Absent)
	}
}

func TestCorruptBlob(t *testing.T) {
	f := newFixture(t)
	p := f.Store.Path(f.Capture)
	if err := os.Chmod(p, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("bit rot"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Write(context.Background(), f.opts())
	if err == nil || !strings.Contains(err.Error(), "corrupt") || !strings.Contains(err.Error(), f.RunDir) {
		t.Fatalf("corrupt blob: err = %v", err)
	}
	assertNoArchive(t, f.Out)
}

func TestDirtyTree(t *testing.T) {
	f := newFixture(t)
	clean := mustWrite(t, f.opts())

	// An untracked file is not part of the bundle and does not make the
	// tree dirty.
	writeFile(t, f.Root, "notes.txt", "scratch\n", 0o644)
	o := f.opts()
	o.OutDir = t.TempDir()
	if rep := mustWrite(t, o); rep.SHA256 != clean.SHA256 || rep.Dirty {
		t.Errorf("an untracked file changed the bundle (dirty=%v)", rep.Dirty)
	}

	// A modified tracked file is refused...
	writeFile(t, f.Root, "main.go", "package main\n\n// edited\nfunc main() {}\n", 0o644)
	o.OutDir = t.TempDir()
	_, err := Write(context.Background(), o)
	if err == nil || !strings.Contains(err.Error(), "main.go") || !strings.Contains(err.Error(), "PQREPRO_BUNDLE_DIRTY=1") {
		t.Fatalf("dirty tree: err = %v", err)
	}
	assertNoArchive(t, o.OutDir)

	// ...unless allowed: then the bundle says so everywhere.
	o.AllowDirty = true
	rep := mustWrite(t, o)
	if !rep.Dirty || !strings.HasSuffix(rep.Path, "-dirty.tar.gz") {
		t.Errorf("dirty bundle: dirty=%v path %s", rep.Dirty, rep.Path)
	}
	_, ms := readArchive(t, rep.Path)
	var man Manifest
	for _, m := range ms {
		switch path.Base(m.Hdr.Name) {
		case ManifestFile:
			if err := json.Unmarshal(m.Data, &man); err != nil {
				t.Fatal(err)
			}
		case "main.go":
			if !strings.Contains(string(m.Data), "// edited") {
				t.Error("the dirty bundle does not hold the working-tree content")
			}
		case ArtifactFile:
			if !strings.Contains(string(m.Data), "NOT a clean checkout") {
				t.Error("ARTIFACT.md does not say the tree was dirty")
			}
		case "notes.txt":
			t.Error("an untracked file was bundled")
		}
	}
	if !man.Dirty || !slices.Equal(man.DirtyFiles, []string{"main.go"}) {
		t.Errorf("manifest dirty=%v files %q", man.Dirty, man.DirtyFiles)
	}

	// A staged rename names both paths; a deleted file is left out.
	runGit(t, f.Root, "checkout", "--", "main.go")
	runGit(t, f.Root, "mv", "README.md", "README2.md")
	if err := os.Remove(filepath.Join(f.Root, "go.mod")); err != nil {
		t.Fatal(err)
	}
	tree, err := readTree(context.Background(), f.Root)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(tree.Dirty, []string{"README.md", "README2.md", "go.mod"}) {
		t.Errorf("dirty paths %q", tree.Dirty)
	}
	o.OutDir = t.TempDir()
	rep = mustWrite(t, o)
	if !slices.ContainsFunc(rep.Warnings, func(w string) bool { return strings.Contains(w, "go.mod is tracked but deleted") }) {
		t.Errorf("warnings %q do not mention the deleted go.mod", rep.Warnings)
	}
}

func TestRefusals(t *testing.T) {
	f := newFixture(t)
	cases := []struct {
		name  string
		setup func(t *testing.T)
		opt   func(o *Options)
		want  string
	}{
		{"not a repository", nil, func(o *Options) { o.Root = t.TempDir() }, "not a Git checkout"},
		{"subfolder", nil, func(o *Options) { o.Root = filepath.Join(f.Root, "docs") }, "not the top level"},
		{"bad version", nil, func(o *Options) { o.Version = "../x" }, "not usable in a file name"},
		{"no citation", func(t *testing.T) { runGit(t, f.Root, "rm", "-q", "CITATION.cff"); f.commit(t, "drop cff") }, nil, "CITATION.cff is not committed"},
		{"no data licence", func(t *testing.T) { runGit(t, f.Root, "rm", "-q", DataLicenseFile); f.commit(t, "drop data licence") }, nil, "LICENSE-DATA is not committed"},
		{"no sums", func(t *testing.T) { runGit(t, f.Root, "rm", "-q", "SHA256SUMS"); f.commit(t, "drop sums") }, nil, "SHA256SUMS is not committed"},
		{"generated name committed", func(t *testing.T) { writeFile(t, f.Root, ManifestFile, "{}", 0o644); f.commit(t, "clash") }, nil, "the bundle generates a file of that name"},
		{"store committed", func(t *testing.T) { writeFile(t, f.Root, ".store/x", "x", 0o644); f.commit(t, "store") }, nil, "where the bundle puts the content store"},
		{"meta hash mismatch", func(t *testing.T) {
			writeFile(t, f.Root, f.RunDir+"/records.csv", "changed\n", 0o644)
			f.commit(t, "edit data")
		}, nil, "the dataset was changed after it was recorded"},
		{"meta not json", func(t *testing.T) { writeFile(t, f.Root, f.RunDir+"/meta.json", "{", 0o644); f.commit(t, "break meta") }, nil, "meta.json"},
		{"bad files entry", func(t *testing.T) {
			writeFile(t, f.Root, f.RunDir+"/meta.json", `{"files":{"gone.bin":"nothex"}}`, 0o644)
			f.commit(t, "bad files")
		}, nil, "neither a committed file"},
		{"bad timings", func(t *testing.T) { writeFile(t, f.Root, DefaultTimingsFile, "[", 0o644); f.commit(t, "bad timings") }, nil, DefaultTimingsFile},
		{"cancelled", nil, func(o *Options) {}, "context canceled"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f = newFixture(t)
			if c.setup != nil {
				c.setup(t)
			}
			o := f.opts()
			if c.opt != nil {
				c.opt(&o)
			}
			ctx, cancel := context.WithCancel(context.Background())
			if c.name == "cancelled" {
				cancel()
			}
			defer cancel()
			_, err := Write(ctx, o)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want one containing %q", err, c.want)
			}
			assertNoArchive(t, f.Out)
		})
	}
}

// TestChangedWhileWriting: a file that changes between listing and
// archiving fails the bundle rather than archive what the sums do not say.
func TestChangedWhileWriting(t *testing.T) {
	e := &entry{Path: "a", Data: []byte("new content"), Size: 3, SHA256: repro.HashBytes([]byte("old"))}
	err := writeArchive(context.Background(), &bytes.Buffer{}, "p", []*entry{e}, testEpoch, nil)
	if err == nil || !strings.Contains(err.Error(), "changed while the bundle was written") {
		t.Fatalf("err = %v", err)
	}
	e = &entry{Path: "a", Data: []byte("new"), Size: 3, SHA256: repro.HashBytes([]byte("old"))}
	if err := writeArchive(context.Background(), &bytes.Buffer{}, "p", []*entry{e}, testEpoch, nil); err == nil {
		t.Fatal("same size, other content: no error")
	}
}

func TestTimingsInAppendix(t *testing.T) {
	f := newFixture(t)
	tm := &Timings{Host: "Test CPU, 2 cores", Go: "go1.27.3", Targets: map[string]Timing{
		"verify": {Seconds: 42.25, Note: "re-derives all 3 stages"},
		"paper":  {Seconds: 3, Failed: true, Note: "failed: no pdflatex"},
	}}
	if err := tm.Write(filepath.Join(f.Root, DefaultTimingsFile)); err != nil {
		t.Fatal(err)
	}
	writeFile(t, f.Root, repro.LockFile, `{"version":1,"stages":{"paper":{"code":"c","inputs":{},"outputs":{"SHA256SUMS":"x"}}}}`, 0o644)
	f.commit(t, "timings")
	rep := mustWrite(t, f.opts())
	_, ms := readArchive(t, rep.Path)
	for _, m := range ms {
		if path.Base(m.Hdr.Name) != ArtifactFile {
			continue
		}
		art := string(m.Data)
		for _, want := range []string{"Measured on Test CPU, 2 cores with go1.27.3", "| `verify` | 42.2 s |", "re-derives all 3 stages", "| `paper` | 3.0 s (failed) |", "| `build` | not measured |"} {
			if !strings.Contains(art, want) {
				t.Errorf("ARTIFACT.md lacks %q:\n%s", want, art)
			}
		}
		return
	}
	t.Fatal("no ARTIFACT.md")
}

func TestMeasure(t *testing.T) {
	clock := testEpoch
	now := func() time.Time { clock = clock.Add(1500 * time.Millisecond); return clock }
	steps := []Step{
		{Name: "verify", Note: "n", Run: func(context.Context) error { return nil }},
		{Name: "paper", State: func() string { return "2 of 3 stale" }, Run: func(context.Context) error { return fmt.Errorf("no pdflatex") }},
	}
	tm, err := Measure(context.Background(), "h", "go", steps, now, nil)
	if err != nil {
		t.Fatal(err)
	}
	if v := tm.Targets["verify"]; v.Seconds != 1.5 || v.Failed || v.Note != "n" {
		t.Errorf("verify %+v", v)
	}
	if p := tm.Targets["paper"]; !p.Failed || p.Note != "2 of 3 stale; failed: no pdflatex" {
		t.Errorf("paper %+v", p)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Measure(ctx, "h", "go", steps, now, nil); err == nil {
		t.Error("a cancelled measurement returned timings")
	}
}

func TestSectionAndGoVersion(t *testing.T) {
	cases := []struct{ doc, title, want string }{
		{testReadme, "Requirements", "- Go 1.27.3 and root for captures."},
		{testHardware, "Hardware notes", "No board was attached."},
		{testReadme, "Missing", ""},
		{"## A\n### sub\ntext\n## B\n", "A", "### sub\ntext"},
	}
	for _, c := range cases {
		if got := section(c.doc, c.title); got != c.want {
			t.Errorf("section(%q) = %q, want %q", c.title, got, c.want)
		}
	}
	if got := goVersion([]byte("module x\n\ngo 1.27.3\n\ntoolchain go1.27.3\n")); got != "go 1.27.3, toolchain go1.27.3" {
		t.Errorf("goVersion = %q", got)
	}
	if got := goVersion(nil); !strings.Contains(got, "unknown") {
		t.Errorf("goVersion(nil) = %q", got)
	}
	for s, want := range map[float64]string{4.25: "4.2 s", 125: "2 min 05 s", 3*3600 + 7*60: "3 h 07 min"} {
		if got := duration(s); got != want {
			t.Errorf("duration(%v) = %q, want %q", s, got, want)
		}
	}
}

func TestUSTARSplit(t *testing.T) {
	for name, want := range map[string]bool{
		strings.Repeat("a", 120) + "/b":                           true,
		"a/" + strings.Repeat("b", 101):                           false,
		strings.Repeat("a", 156) + "/b":                           false,
		strings.Repeat("a", 100) + "/" + strings.Repeat("b", 100): true,
	} {
		if got := ustarSplittable(name); got != want {
			t.Errorf("ustarSplittable(%d bytes) = %v, want %v", len(name), got, want)
		}
	}
}

func FuzzBlobRefs(f *testing.F) {
	f.Add([]byte(`{"files":{"a":"` + strings.Repeat("a", 64) + `"},"measured":{"x":["` + strings.Repeat("b", 64) + `"]}}`))
	f.Add([]byte(`{"files":{"records.csv":"00"},"measured":{"n":{"m":1}}}`))
	sums := map[string]string{"data/s/r/records.csv": strings.Repeat("c", 64)}
	f.Fuzz(func(t *testing.T, b []byte) {
		var m struct {
			Files    map[string]string `json:"files"`
			Measured map[string]any    `json:"measured"`
		}
		if json.Unmarshal(b, &m) != nil {
			return
		}
		meta := metaOf(m.Files, m.Measured)
		refs, _ := blobRefs("data/s/r/meta.json", meta, sums)
		for h := range refs {
			if !isSHA256(h) {
				t.Fatalf("reference %q is not a SHA-256", h)
			}
			if h == sums["data/s/r/records.csv"] {
				t.Fatal("the hash of a committed file of the run was taken for a blob")
			}
		}
	})
}

func metaOf(files map[string]string, measured map[string]any) provenance.Meta {
	return provenance.Meta{Files: files, Measured: measured}
}

// TestGNUTar cross-checks the archive with independent tools: GNU tar
// lists and unpacks it, and sha256sum -c accepts both checksum lists in
// the unpacked tree.
func TestGNUTar(t *testing.T) {
	for _, tool := range []string{"tar", "sha256sum"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (Debian packages tar, coreutils): it is the independent check of the archive", tool)
		}
	}
	f := newFixture(t)
	rep := mustWrite(t, f.opts())
	dir := t.TempDir()
	if out, err := exec.Command("tar", "-xzf", rep.Path, "-C", dir).CombinedOutput(); err != nil {
		t.Fatalf("GNU tar cannot unpack the bundle: %v\n%s", err, out)
	}
	top := filepath.Join(dir, "pqrepro-"+short(rep.Commit))
	for _, sums := range []string{BundleSums, repro.SumsFile} {
		cmd := exec.Command("sha256sum", "--strict", "-c", sums)
		cmd.Dir = top
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("sha256sum -c %s in the unpacked bundle: %v\n%s", sums, err, out)
		}
	}
	fi, err := os.Stat(filepath.Join(top, ".ci", "run"))
	if err != nil || fi.Mode().Perm()&0o111 == 0 {
		t.Errorf("the executable did not unpack as executable: %v %v", fi.Mode(), err)
	}
	list := exec.Command("tar", "-tvzf", rep.Path)
	list.Env = append(os.Environ(), "TZ=UTC")
	out, err := list.Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if !strings.Contains(l, " 0/0 ") || !strings.Contains(l, " 2026-01-01 00:00") {
			t.Errorf("GNU tar sees another owner or date: %s", l)
		}
	}
}

func TestBlobRefsOnlyStoredHashesInMeasured(t *testing.T) {
	h := func(c byte) string { return strings.Repeat(string(c), 64) }
	m := provenance.Meta{
		Files: map[string]string{"records.csv.gz": h('a'), "capture.pcapng": h('b')},
		Measured: map[string]any{
			"capture_sha256": h('c'),
			"images":         map[string]any{"mlkem": map[string]any{"uf2_sha256": h('d')}},
		},
	}
	refs, err := blobRefs("data/x/run/meta.json", m, map[string]string{"data/x/run/records.csv.gz": h('a')})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{h('b'), h('c')} {
		if _, ok := refs[want]; !ok {
			t.Errorf("blob %s… not referenced: %v", want[:4], refs)
		}
	}
	if _, ok := refs[h('d')]; ok {
		t.Error("a firmware image hash in measured was taken for a store blob")
	}
}
