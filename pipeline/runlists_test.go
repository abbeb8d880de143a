package pipeline

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"pqrepro/internal/provenance"
	"pqrepro/internal/repro"
	"pqrepro/internal/runlist"
	"pqrepro/internal/settings"
	"pqrepro/internal/spec"
)

// recordRun records a sealed run of study (its folder under data/) named
// after named, holding files, whose meta.json says what edit makes of it
// (study, ID, a minute from named, the files' SHA-256 by default), and
// returns its folder. It lists the run nowhere.
func recordRun(t *testing.T, root, study string, named time.Time, files map[string][]byte, edit func(*provenance.Meta)) string {
	t.Helper()
	r, err := repro.NewRun(filepath.Join(root, "data"), study, settings.Quick, named)
	if err != nil {
		t.Fatal(err)
	}
	m := provenance.Meta{Study: study, RunID: r.ID, Profile: settings.Quick, Start: named, End: named.Add(time.Minute), Files: map[string]string{}}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(r.Dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
		m.Files[name] = repro.HashBytes(b)
	}
	if edit != nil {
		edit(&m)
	}
	if err := provenance.Write(r.Dir, m); err != nil {
		t.Fatal(err)
	}
	if err := r.Commit(); err != nil {
		t.Fatal(err)
	}
	return "data/" + study + "/" + r.ID
}

// forge copies the run folder src to data/ev/<id> as issue 44 did: every
// record multiplied by 10, meta.json's run_id, start, end and files and
// the manifest rewritten to agree, so that the copy checks against
// itself. It returns the copy's folder.
func forge(t *testing.T, root, src, id string) string {
	t.Helper()
	dst := "data/ev/" + id
	copyTree(t, root, src, dst)
	abs := filepath.Join(root, dst)
	zr, err := gzipReader(filepath.Join(abs, "records.csv.gz"))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	zw := gzip.NewWriter(&out)
	for _, line := range strings.Fields(string(zr)) {
		n, _ := strconv.Atoi(line)
		fmt.Fprintf(zw, "%d\n", 10*n)
	}
	zw.Close()
	os.WriteFile(filepath.Join(abs, "records.csv.gz"), out.Bytes(), 0o644)
	m, err := provenance.Read(abs)
	if err != nil {
		t.Fatal(err)
	}
	named, _ := time.Parse(runIDLayout, strings.Split(id, "-")[0])
	m.RunID, m.Start, m.End = id, named.Add(250*time.Millisecond), named.Add(91*time.Second)
	m.Files["records.csv.gz"] = repro.HashBytes(out.Bytes())
	provenance.Write(abs, m)
	os.Remove(filepath.Join(abs, repro.ManifestFile))
	if _, err := repro.WriteManifest(abs, "ev/"+id); err != nil {
		t.Fatal(err)
	}
	return dst
}

func gzipReader(p string) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	return io.ReadAll(zr)
}

// editList rewrites the ev study's run list with f.
func editList(t *testing.T, root string, f func(string) string) {
	t.Helper()
	p := filepath.Join(root, runlist.Path("ev"))
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(f(string(b))), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestRunListsRefuse checks issue 44's cases: a run that agrees with
// itself but that no run list names, that sits under another study or
// under no registered study, that copies another run's captures or
// timings, or whose list or pin disagrees, is refused by status, build,
// verify, all and quick, each naming the run or the file and what to do,
// and nothing sealed (SHA256SUMS, the lock, the outputs, the lists, the
// spec, the pinned run's manifest) is rewritten.
func TestRunListsRefuse(t *testing.T) {
	clock := time.Date(2026, 12, 10, 12, 0, 0, 0, time.UTC)
	day := func(d, h int) time.Time { return time.Date(2026, 12, d, h, 0, 0, 0, time.UTC) }
	dirty := func(m *provenance.Meta) {
		m.Git = provenance.Git{Commit: "abc", Dirty: true, DiffSHA256: repro.HashBytes([]byte("patch\n"))}
	}
	for _, tc := range []struct {
		name string
		// make changes the tree and returns the path the first FAIL line
		// names.
		make func(t *testing.T, root, pinned string) string
		want []string // what that line says, in order
	}{
		{"the issue's forgery: a copy under a past ID, records x10, meta.json and manifest rewritten", func(t *testing.T, root, pinned string) string {
			return forge(t, root, pinned, "20261201T000000Z-quick")
		}, []string{
			": no run list names it: experiments/ev.runs has no line for 20261201T000000Z-quick, so it is not evidence",
			"add the line `20261201T000000Z-quick@sha256:",
			"a copy of data/ev/20261130T120000Z-quick, or it of this run: both hold content-store blob capture.pcapng",
		}},
		{"the forgery, listed too", func(t *testing.T, root, pinned string) string {
			run := forge(t, root, pinned, "20261201T000000Z-quick")
			if err := listRun(root, run, runlist.Evidence); err != nil {
				t.Fatal(err)
			}
			return run
		}, []string{": a copy of data/ev/20261130T120000Z-quick, or it of this run: both hold content-store blob capture.pcapng"}},
		{"the original of a listed copy is named too", func(t *testing.T, root, pinned string) string {
			listRun(root, forge(t, root, pinned, "20261201T000000Z-quick"), runlist.Evidence)
			return pinned
		}, []string{": a copy of data/ev/20261201T000000Z-quick, or it of this run"}},
		{"a run with identical records, listed", func(t *testing.T, root, pinned string) string {
			b, _ := os.ReadFile(filepath.Join(root, pinned, "records.csv.gz"))
			run := recordRun(t, root, "ev", day(2, 0), map[string][]byte{"records.csv.gz": b}, nil)
			listRun(root, run, runlist.Evidence)
			return run
		}, []string{": a copy of data/ev/20261130T120000Z-quick, or it of this run: both hold records.csv.gz "}},
		{"an unlisted run", func(t *testing.T, root, _ string) string {
			return recordRun(t, root, "ev", day(2, 0), map[string][]byte{"x.txt": []byte("1\n")}, nil)
		}, []string{": no run list names it", " evidence` to experiments/ev.runs"}},
		{"another study's run moved under data/ev, its manifest's header edited, listed", func(t *testing.T, root, _ string) string {
			run := recordRun(t, root, "ev", day(2, 0), map[string][]byte{"x.txt": []byte("1\n")}, func(m *provenance.Meta) { m.Study = "net" })
			listRun(root, run, runlist.Evidence)
			return run + "/meta.json"
		}, []string{`: study is "net", but the run lies under data/ev/: a run is never moved between studies`}},
		{"a run under an unknown study", func(t *testing.T, root, _ string) string {
			recordRun(t, root, "evil", day(2, 0), map[string][]byte{"x.txt": []byte("1\n")}, nil)
			return "data/evil"
		}, []string{": evil is no registered study (ev): a run goes under data/<study>/ of the study that recorded it"}},
		{"a list line naming no run", func(t *testing.T, root, _ string) string {
			editList(t, root, func(s string) string {
				return s + "20261202T000000Z-quick@sha256:" + strings.Repeat("0", 64) + " evidence\n"
			})
			return runlist.Path("ev")
		}, []string{": line 13 names 20261202T000000Z-quick, but data/ev/20261202T000000Z-quick is not a sealed run"}},
		{"a list that does not parse", func(t *testing.T, root, _ string) string {
			editList(t, root, func(s string) string { return s + "20261202T000000Z-quick evidence\n" })
			return runlist.Path("ev")
		}, []string{": experiments/ev.runs:13: \"20261202T000000Z-quick\" does not end in @sha256:", "no run of ev is evidence while it does not parse"}},
		{"a list line whose manifest SHA-256 was edited", func(t *testing.T, root, pinned string) string {
			editList(t, root, func(s string) string {
				i := strings.Index(s, "20261130T120000Z-quick@sha256:") + len("20261130T120000Z-quick@sha256:")
				return s[:i] + strings.Repeat("0", 64) + s[i+64:]
			})
			return pinned + "/MANIFEST.sha256"
		}, []string{": sha256 ", ", but experiments/ev.runs line 12 lists 000000000000: the manifest or the list was edited"}},
		{"the pinned run listed as evidence", func(t *testing.T, root, _ string) string {
			editList(t, root, func(s string) string { return strings.Replace(s, " pinned\n", " evidence\n", 1) })
			return runlist.Path("ev")
		}, []string{": line 12 lists 20261130T120000Z-quick as evidence, but experiments/ev.toml [runs] quick pins it: write `pinned`"}},
		{"a run marked pinned that no pin names", func(t *testing.T, root, _ string) string {
			run := recordRun(t, root, "ev", day(2, 0), map[string][]byte{"x.txt": []byte("1\n")}, nil)
			listRun(root, run, runlist.Evidence)
			editList(t, root, func(s string) string { return strings.Replace(s, " evidence\n", " pinned\n", 1) })
			return runlist.Path("ev")
		}, []string{": line 13 marks 20261202T000000Z-quick pinned, but no [runs] pin of experiments/ev.toml names it"}},
		{"a run from a dirty tree without its diff, not flagged", func(t *testing.T, root, _ string) string {
			run := recordRun(t, root, "ev", day(2, 0), map[string][]byte{"x.txt": []byte("1\n")}, dirty)
			listRun(root, run, runlist.Evidence)
			return runlist.Path("ev")
		}, []string{": experiments/ev.runs line 13: 20261202T000000Z-quick was recorded from a dirty tree (meta.json git.dirty) and its folder keeps no git.diff", "write `evidence,dirty-no-diff` to say so"}},
		{"a run from a dirty tree without its diff, recorded since runs keep it, pinned", func(t *testing.T, root, _ string) string {
			run := recordRun(t, root, "ev", day(8, 0), map[string][]byte{"x.txt": []byte("1\n")}, dirty)
			b, _ := os.ReadFile(filepath.Join(root, run, repro.ManifestFile))
			if err := spec.Pin(filepath.Join(root, "experiments/ev.toml"), settings.Quick, spec.Sealed(filepath.Base(run), repro.HashBytes(b))); err != nil {
				t.Fatal(err)
			}
			if err := runlist.Add(filepath.Join(root, runlist.Path("ev")), "ev", runlist.Entry{ID: filepath.Base(run), Manifest: repro.HashBytes(b), Role: runlist.Pinned, DirtyNoDiff: true}); err != nil {
				t.Fatal(err)
			}
			return runlist.Path("ev")
		}, []string{": experiments/ev.runs line 13 pins 20261208T000000Z-quick, recorded from a dirty tree without its git.diff: runs since 2026-12-07 keep their patch, so a reference run without it cannot be pinned"}},
		{"a run from a dirty tree whose git.diff is not the patch hashed", func(t *testing.T, root, _ string) string {
			run := recordRun(t, root, "ev", day(8, 0), map[string][]byte{"x.txt": []byte("1\n"), runlist.DiffFile: []byte("another patch\n")}, dirty)
			listRun(root, run, runlist.Evidence)
			return run + "/git.diff"
		}, []string{": sha256 ", ", but meta.json's git.diff_sha256 is " + repro.HashBytes([]byte("patch\n")) + ": it is not the patch of the tree the run ran"}},
		{"a clean run flagged dirty-no-diff", func(t *testing.T, root, _ string) string {
			editList(t, root, func(s string) string { return strings.Replace(s, " pinned\n", " pinned,dirty-no-diff\n", 1) })
			return runlist.Path("ev")
		}, []string{": experiments/ev.runs line 12 flags 20261130T120000Z-quick dirty-no-diff, but its meta.json says the tree was clean"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, log, pinned := evidenceRepo(t)
			studies[0].Timed = []string{"records.csv.gz"}
			cfg.Now = func() time.Time { return clock }
			path := tc.make(t, cfg.Root, pinned)
			before := snapshotFiles(t, cfg.Root)
			for _, f := range []string{runlist.Path("ev"), "experiments/ev.toml", pinned + "/" + repro.ManifestFile} {
				b, _ := os.ReadFile(filepath.Join(cfg.Root, f))
				before[f] = string(b)
			}
			for _, target := range []string{"status", "build", "verify", "all", "quick"} {
				log.Reset()
				var err error
				switch target {
				case "status":
					err = Status(context.Background(), cfg)
				case "build":
					err = Build(context.Background(), cfg)
				case "verify":
					err = Verify(context.Background(), cfg)
				default:
					c := cfg
					c.Profile = map[string]string{"all": settings.Full, "quick": settings.Quick}[target]
					err = All(context.Background(), c)
				}
				if err == nil {
					t.Errorf("%s: no error:\n%s", target, log)
				}
				prefix := "FAIL " + path + ": "
				if target == "status" {
					prefix = "  ERROR  " + path + ": "
				}
				if !lineHas(log.String(), prefix, tc.want) {
					t.Errorf("%s: no line %q... holding %q:\n%s", target, prefix, tc.want, log)
				}
				if strings.Contains(log.String(), "stages ran") || strings.Contains(log.String(), "build: sealed") {
					t.Errorf("%s did work before refusing:\n%s", target, log)
				}
				after := snapshotFiles(t, cfg.Root)
				for f := range before {
					if _, ok := after[f]; !ok {
						b, _ := os.ReadFile(filepath.Join(cfg.Root, f))
						after[f] = string(b)
					}
				}
				if fmt.Sprint(after) != fmt.Sprint(before) {
					t.Errorf("%s changed SHA256SUMS, the lock, an output, the list, the spec or the manifest", target)
				}
			}
		})
	}
}

// lineHas reports whether out has a line starting with prefix that
// holds each of wants in order (the first right after the prefix when it
// starts with ": ").
func lineHas(out, prefix string, wants []string) bool {
	for _, line := range strings.Split(out, "\n") {
		rest, ok := strings.CutPrefix(line, strings.TrimSuffix(prefix, ": "))
		if !ok {
			continue
		}
		good := true
		for i, w := range wants {
			j := strings.Index(rest, w)
			if j < 0 || (i == 0 && strings.HasPrefix(w, ": ") && j != 0) {
				good = false
				break
			}
			rest = rest[j+len(w):]
		}
		if good {
			return true
		}
	}
	return false
}

// TestRunListsAccept: what the checks must let through: a pinned run
// from a dirty tree recorded before runs kept their patch, flagged, and
// a dirty run keeping its patch.
func TestRunListsAccept(t *testing.T) {
	dirty := func(m *provenance.Meta) {
		m.Git = provenance.Git{Commit: "abc", Dirty: true, DiffSHA256: repro.HashBytes([]byte("patch\n"))}
	}
	cfg, log, _ := evidenceRepo(t)
	cfg.Now = func() time.Time { return time.Date(2026, 12, 10, 0, 0, 0, 0, time.UTC) }
	run := recordRun(t, cfg.Root, "ev", time.Date(2026, 12, 8, 0, 0, 0, 0, time.UTC), map[string][]byte{"x.txt": []byte("1\n"), runlist.DiffFile: []byte("patch\n")}, dirty)
	listRun(cfg.Root, run, runlist.Evidence)
	old := recordRun(t, cfg.Root, "ev", time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), map[string][]byte{"x.txt": []byte("2\n")}, dirty)
	b, _ := os.ReadFile(filepath.Join(cfg.Root, old, repro.ManifestFile))
	if err := spec.Pin(filepath.Join(cfg.Root, "experiments/ev.toml"), settings.Quick, spec.Sealed(filepath.Base(old), repro.HashBytes(b))); err != nil {
		t.Fatal(err)
	}
	runlist.Add(filepath.Join(cfg.Root, runlist.Path("ev")), "ev", runlist.Entry{ID: filepath.Base(old), Manifest: repro.HashBytes(b), Role: runlist.Pinned, DirtyNoDiff: true})
	rep, err := checkEvidence(cfg, nil)
	if err != nil || len(rep.Problems) > 0 || rep.Unlisted > 0 {
		t.Fatalf("checkEvidence: %v %+v\n%s", err, rep, log)
	}
}

// TestCommittedRunLists: the committed tree's lists name every run, as
// pinned where a pin names it, and flag the dirty runs that keep no
// patch; no two runs share a capture or timings.
func TestCommittedRunLists(t *testing.T) {
	// The committed tree: its lists name every run, as pinned where a
	// pin names it, and flag the dirty runs that keep no patch.
	root := repoRoot(t)
	ix, err := readRunIndex(root)
	if err != nil {
		t.Fatal(err)
	}
	pins, err := pinnedRuns(Config{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	var problems []repro.Problem
	for _, dir := range ix.folders {
		m, err := provenance.Read(filepath.Join(root, dir))
		if err != nil {
			t.Fatal(err)
		}
		problems = append(problems, ix.runProblems(dir, &m)...)
	}
	problems = append(problems, ix.listProblems(pins)...)
	for _, p := range problems {
		t.Errorf("the committed tree: %s", p)
	}
	if len(ix.folders) == 0 {
		t.Error("the committed tree has no runs")
	}
}
