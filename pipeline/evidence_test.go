package pipeline

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
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
	"pqrepro/internal/treelock"
)

// evidenceRepo is a repository with one study, "ev", whose spec pins a
// run recorded by repro.NewRun and Run.Commit (so sealed) holding a
// gzipped CSV, meta.json and one content-store blob, and whose stage sums
// the CSV; it is built once, so that the lock, SHA256SUMS and the hash
// cache exist. It returns the config, the log and the run folder.
func evidenceRepo(t *testing.T) (Config, *bytes.Buffer, string) {
	t.Helper()
	root := t.TempDir()
	write := func(rel string, b []byte) {
		t.Helper()
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", []byte("module fake\n"))
	write("analysis/a.go", []byte("package analysis\n"))
	write("experiments/ev.toml", []byte("# spec\n[runs]\n"))
	saved, savedClaims := studies, withClaims
	t.Cleanup(func() { studies, withClaims = saved, savedClaims })
	withClaims = false
	studies = []Study{{
		Name:  "ev",
		Title: "evidence tests",
		StagesFor: func(root, profile, run string, _ settings.Settings) ([]*repro.Stage, error) {
			return []*repro.Stage{{
				Name: "ev:analyze", Doc: "sum the records", Code: []string{"analysis"},
				Inputs: []string{run}, Outputs: []string{"results/ev.txt"},
				Run: func(ctx context.Context, env *repro.Env) error {
					f, err := env.Open(run + "/records.csv.gz")
					if err != nil {
						return err
					}
					defer f.Close()
					zr, err := gzip.NewReader(f)
					if err != nil {
						return fmt.Errorf("read records: %w", err)
					}
					sum := 0
					sc := bufio.NewScanner(zr)
					for sc.Scan() {
						n, err := strconv.Atoi(sc.Text())
						if err != nil {
							return fmt.Errorf("read records: %w", err)
						}
						sum += n
					}
					if err := sc.Err(); err != nil {
						return fmt.Errorf("read records: %w", err)
					}
					return env.WriteFile("results/ev.txt", []byte(strconv.Itoa(sum)+"\n"))
				},
			}}, nil
		},
	}}

	start := time.Date(2026, 11, 30, 12, 0, 0, 250e6, time.UTC)
	r, err := repro.NewRun(filepath.Join(root, "data"), "ev", settings.Quick, start)
	if err != nil {
		t.Fatal(err)
	}
	var csv bytes.Buffer
	zw := gzip.NewWriter(&csv)
	for i := range 2000 {
		fmt.Fprintf(zw, "%d\n", i)
	}
	zw.Close()
	if err := os.WriteFile(filepath.Join(r.Dir, "records.csv.gz"), csv.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	blob := filepath.Join(t.TempDir(), "capture.pcapng")
	os.WriteFile(blob, []byte("a capture"), 0o644)
	blobSum, err := repro.OpenStore(root, "").Put(blob)
	if err != nil {
		t.Fatal(err)
	}
	m := provenance.Meta{Study: "ev", RunID: r.ID, Start: start, End: start.Add(90 * time.Second), Files: map[string]string{
		"records.csv.gz": repro.HashBytes(csv.Bytes()), "capture.pcapng": blobSum}}
	if err := provenance.Write(r.Dir, m); err != nil {
		t.Fatal(err)
	}
	if err := r.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := spec.Pin(filepath.Join(root, "experiments/ev.toml"), settings.Quick, spec.Sealed(r.ID, r.Manifest)); err != nil {
		t.Fatal(err)
	}
	if err := listRun(root, "data/ev/"+r.ID, runlist.Pinned); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	cfg := Config{Root: root, Log: &log}
	if err := Build(context.Background(), cfg); err != nil {
		t.Fatalf("first build: %v\n%s", err, &log)
	}
	if err := Verify(context.Background(), cfg); err != nil {
		t.Fatalf("verify of the untouched tree: %v\n%s", err, &log)
	}
	log.Reset()
	return cfg, &log, "data/ev/" + r.ID
}

// listRun adds the sealed run folder run (data/<study>/<run-id>, relative
// to root) to its study's run list with role, as runlife.Commit does.
func listRun(root, run, role string) error {
	b, err := os.ReadFile(filepath.Join(root, run, repro.ManifestFile))
	if err != nil {
		return err
	}
	study := path.Base(path.Dir(run))
	return runlist.Add(filepath.Join(root, runlist.Path(study)), study, runlist.Entry{ID: path.Base(run), Manifest: repro.HashBytes(b), Role: role})
}

// snapshotFiles reads the files a refused build must leave alone.
func snapshotFiles(t *testing.T, root string) map[string]string {
	out := map[string]string{}
	for _, f := range []string{repro.SumsFile, repro.LockFile, "results/ev.txt"} {
		b, _ := os.ReadFile(filepath.Join(root, f))
		out[f] = string(b)
	}
	return out
}

func TestAlteredRunIsRefusedAndReported(t *testing.T) {
	edit := func(t *testing.T, p string, f func([]byte) []byte) {
		t.Helper()
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	flip := func(b []byte) []byte { b[len(b)/2] ^= 0x01; return b }
	for _, tc := range []struct {
		name   string
		tamper func(t *testing.T, root, run string)
		fail   string // the FAIL line (prefix) every target must print
	}{
		{"byte flip", func(t *testing.T, root, run string) {
			edit(t, filepath.Join(root, run, "records.csv.gz"), flip)
		}, "FAIL RUN/records.csv.gz: content differs from the sealed run"},
		{"same-size edit with the modification time set back", func(t *testing.T, root, run string) {
			p := filepath.Join(root, run, "records.csv.gz")
			st, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			edit(t, p, flip) // in place: same inode, same size
			if err := os.Chtimes(p, st.ModTime(), st.ModTime()); err != nil {
				t.Fatal(err)
			}
			if st2, _ := os.Stat(p); st2.Size() != st.Size() || !st2.ModTime().Equal(st.ModTime()) {
				t.Fatal("the edit changed size or mtime")
			}
		}, "FAIL RUN/records.csv.gz: content differs from the sealed run"},
		{"truncated gzip", func(t *testing.T, root, run string) {
			edit(t, filepath.Join(root, run, "records.csv.gz"), func(b []byte) []byte { return b[:len(b)/2] })
		}, "FAIL RUN/records.csv.gz: content differs from the sealed run"},
		{"extra file", func(t *testing.T, root, run string) {
			os.WriteFile(filepath.Join(root, run, "more.csv"), []byte("1\n"), 0o644)
		}, "FAIL RUN/more.csv: extra file: not in MANIFEST.sha256"},
		{"hidden extra file", func(t *testing.T, root, run string) {
			os.WriteFile(filepath.Join(root, run, ".x"), []byte("1\n"), 0o644)
		}, "FAIL RUN/.x: extra file"},
		{"deleted file", func(t *testing.T, root, run string) {
			os.Remove(filepath.Join(root, run, "records.csv.gz"))
		}, "FAIL RUN/records.csv.gz: missing (listed in MANIFEST.sha256)"},
		{"edited manifest", func(t *testing.T, root, run string) {
			edit(t, filepath.Join(root, run, repro.ManifestFile), func(b []byte) []byte { return append(b, "# a comment\n"...) })
		}, "FAIL RUN/MANIFEST.sha256: altered: sha256"},
		{"edited pin", func(t *testing.T, root, run string) {
			edit(t, filepath.Join(root, "experiments/ev.toml"), func(b []byte) []byte {
				i := bytes.Index(b, []byte("@sha256:")) + len("@sha256:")
				if b[i] == '0' {
					b[i] = '1'
				} else {
					b[i] = '0'
				}
				return b
			})
		}, "FAIL RUN/MANIFEST.sha256: altered: sha256"},
		{"pin without the manifest hash", func(t *testing.T, root, run string) {
			edit(t, filepath.Join(root, "experiments/ev.toml"), func(b []byte) []byte {
				i := bytes.Index(b, []byte("@sha256:"))
				return append(b[:i:i], "\"\n"...)
			})
		}, "FAIL experiments/ev.toml: experiments/ev.toml [runs] quick names RUN without the SHA-256"},
		{"data, meta.json, manifest and pin edited to agree", func(t *testing.T, root, run string) {
			p := filepath.Join(root, run, "records.csv.gz")
			edit(t, p, flip)
			m, err := provenance.Read(filepath.Dir(p))
			if err != nil {
				t.Fatal(err)
			}
			b, _ := os.ReadFile(p)
			m.Files["records.csv.gz"] = repro.HashBytes(b)
			provenance.Write(filepath.Dir(p), m)
			os.Remove(filepath.Join(root, run, repro.ManifestFile))
			sum, err := repro.WriteManifest(filepath.Join(root, run), "ev/"+filepath.Base(run))
			if err == nil {
				err = spec.Pin(filepath.Join(root, "experiments/ev.toml"), settings.Quick, spec.Sealed(filepath.Base(run), sum))
			}
			if err != nil {
				t.Fatal(err)
			}
		}, "FAIL RUN/records.csv.gz: content differs from SHA256SUMS"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, log, run := evidenceRepo(t)
			tc.tamper(t, cfg.Root, run)
			want := strings.ReplaceAll(tc.fail, "RUN", run)
			before := snapshotFiles(t, cfg.Root)

			// build, paper, all and quick refuse before doing anything.
			for name, target := range map[string]func() error{
				"build": func() error { return Build(context.Background(), cfg) },
				"paper": func() error { return Build(context.Background(), cfg, "ev:analyze") },
				"all":   func() error { c := cfg; c.Profile = settings.Full; return All(context.Background(), c) },
				"quick": func() error { c := cfg; c.Profile = settings.Quick; return All(context.Background(), c) },
			} {
				log.Reset()
				err := target()
				if err == nil || !strings.Contains(log.String()+err.Error(), want) {
					t.Errorf("%s: err = %v, want a refusal printing %q:\n%s", name, err, want, log)
				}
				if strings.Contains(log.String(), "new quick run") || strings.Contains(log.String(), "new full run") || strings.Contains(log.String(), "stages ran") {
					t.Errorf("%s did work before refusing:\n%s", name, log)
				}
				if after := snapshotFiles(t, cfg.Root); fmt.Sprint(after) != fmt.Sprint(before) {
					t.Errorf("%s changed SHA256SUMS, the lock or an output", name)
				}
			}

			// status: an error, never advice to rebuild.
			log.Reset()
			err := Status(context.Background(), cfg)
			if err == nil || !strings.Contains(log.String(), strings.Replace(want, "FAIL ", "ERROR  ", 1)) || strings.Contains(log.String(), "mage all") {
				t.Errorf("status: err = %v:\n%s", err, log)
			}

			// verify: every FAIL line, then the stage errors.
			log.Reset()
			err = Verify(context.Background(), cfg)
			if !errors.Is(err, ErrVerify) || !strings.Contains(log.String(), want) {
				t.Errorf("verify: err = %v, want %q:\n%s", err, want, log)
			}
			checkFailsFirst(t, log.String())
		})
	}
}

// checkFailsFirst checks that no FAIL line follows an ERROR line and that
// no file has two FAIL lines.
func checkFailsFirst(t *testing.T, out string) {
	t.Helper()
	seenError := false
	files := map[string]bool{}
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "ERROR") {
			seenError = true
		}
		if p, ok := strings.CutPrefix(line, "FAIL "); ok {
			if seenError {
				t.Errorf("FAIL line after a stage error: %q\n%s", line, out)
			}
			file, _, _ := strings.Cut(p, ": ")
			if files[file] {
				t.Errorf("two FAIL lines for %s:\n%s", file, out)
			}
			files[file] = true
		}
	}
}

func TestVerifyListsFilesBeforeStageErrors(t *testing.T) {
	cfg, log, run := evidenceRepo(t)
	// Not gzip at all: the stage fails, and a blob in the store is corrupt.
	os.WriteFile(filepath.Join(cfg.Root, run, "records.csv.gz"), []byte("not gzip\n"), 0o644)
	m, _ := provenance.Read(filepath.Join(cfg.Root, run))
	blob := repro.OpenStore(cfg.Root, "").Path(m.Files["capture.pcapng"])
	os.Chmod(blob, 0o644)
	os.WriteFile(blob, []byte("another capture"), 0o644)
	err := Verify(context.Background(), cfg)
	out := log.String()
	if !errors.Is(err, ErrVerify) {
		t.Fatalf("verify: %v\n%s", err, out)
	}
	for _, want := range []string{
		"FAIL " + run + "/records.csv.gz: content differs from the sealed run",
		"content differs from SHA256SUMS",
		"FAIL .store/sha256/" + m.Files["capture.pcapng"][:2] + "/",
		"FAIL results/ev.txt: not re-derived: stage ev:analyze failed",
		"ERROR stage ev:analyze: ",
		"read records: ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("verify output lacks %q:\n%s", want, out)
		}
	}
	checkFailsFirst(t, out)
}

// TestBuildAddsNewRunsToSums: a new sealed run enters SHA256SUMS only
// once its study's run list names it, and build says so, one line per
// run; before, build refuses it, naming the line to add, and writes
// nothing.
func TestBuildAddsNewRunsToSums(t *testing.T) {
	cfg, log, _ := evidenceRepo(t)
	// A second, unpinned run, not listed yet.
	r, err := repro.NewRun(filepath.Join(cfg.Root, "data"), "ev", settings.Full, time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(r.Dir, "x.txt"), []byte("1\n"), 0o644)
	start := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	if err := provenance.Write(r.Dir, provenance.Meta{Study: "ev", RunID: r.ID, Start: start, End: start.Add(time.Second)}); err != nil {
		t.Fatal(err)
	}
	if err := r.Commit(); err != nil {
		t.Fatal(err)
	}
	run := "data/ev/" + r.ID
	before := snapshotFiles(t, cfg.Root)
	line := r.ID + "@sha256:" + r.Manifest + " evidence"
	if err := Build(context.Background(), cfg); !errors.Is(err, ErrEvidence) ||
		!strings.Contains(log.String(), "FAIL "+run+": no run list names it: experiments/ev.runs has no line for "+r.ID) ||
		!strings.Contains(log.String(), "add the line `"+line+"` to experiments/ev.runs") {
		t.Fatalf("build beside an unlisted run: %v\n%s", err, log)
	}
	if after := snapshotFiles(t, cfg.Root); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Error("a refused build changed SHA256SUMS, the lock or an output")
	}
	// Listed: its lines are added, and build names it; nothing else
	// changes.
	if err := listRun(cfg.Root, run, runlist.Evidence); err != nil {
		t.Fatal(err)
	}
	log.Reset()
	if err := Build(context.Background(), cfg); err != nil {
		t.Fatalf("build: %v\n%s", err, log)
	}
	if want := "build: sealed " + run + " into SHA256SUMS (3 files; experiments/ev.runs line 13: " + line + ")\nbuild: 0 stages ran"; !strings.Contains(log.String(), want) {
		t.Errorf("build does not name the run it seals: want %q\n%s", want, log)
	}
	sums, _ := os.ReadFile(filepath.Join(cfg.Root, repro.SumsFile))
	for _, f := range []string{"x.txt", repro.ManifestFile} {
		if !bytes.Contains(sums, []byte(run+"/"+f+"\n")) {
			t.Errorf("SHA256SUMS lacks the new run's %s:\n%s", f, sums)
		}
	}
	log.Reset()
	if err := Build(context.Background(), cfg); err != nil || strings.Contains(log.String(), "build: sealed") {
		t.Errorf("a second build: %v\n%s", err, log)
	}
	// Altering the unpinned run is refused against its manifest.
	log.Reset()
	os.WriteFile(filepath.Join(r.Final, "x.txt"), []byte("2\n"), 0o644)
	if err := Build(context.Background(), cfg); !errors.Is(err, ErrEvidence) || !strings.Contains(log.String(), "FAIL data/ev/"+r.ID+"/x.txt: content differs from the sealed run") {
		t.Errorf("build over an altered unpinned run: %v\n%s", err, log)
	}
}

func TestSeal(t *testing.T) {
	cfg, log, run := evidenceRepo(t)
	// Make the run look like one from before manifests: no manifest, a
	// bare pin.
	abs := filepath.Join(cfg.Root, run)
	id := filepath.Base(run)
	os.Remove(filepath.Join(abs, repro.ManifestFile))
	os.Remove(filepath.Join(cfg.Root, runlist.Path("ev"))) // no list names a run without a manifest
	sumsPath := filepath.Join(cfg.Root, repro.SumsFile)
	sums, _ := os.ReadFile(sumsPath)
	var kept []string
	for _, line := range strings.SplitAfter(string(sums), "\n") {
		if !strings.Contains(line, repro.ManifestFile) {
			kept = append(kept, line)
		}
	}
	os.WriteFile(sumsPath, []byte(strings.Join(kept, "")), 0o644)
	specPath := filepath.Join(cfg.Root, "experiments/ev.toml")
	if err := spec.Pin(specPath, settings.Quick, id); err != nil {
		t.Fatal(err)
	}
	if err := Build(context.Background(), cfg); err == nil || !strings.Contains(log.String(), "is sealed once with `go run ./cmd/pqrepro seal "+run+"`") {
		t.Fatalf("build of an unsealed run: %v\n%s", err, log)
	}

	// A run that differs from its meta.json or SHA256SUMS is not sealed.
	rec := filepath.Join(abs, "records.csv.gz")
	good, _ := os.ReadFile(rec)
	os.WriteFile(rec, append([]byte{}, good[:len(good)-1]...), 0o644)
	if err := Seal(context.Background(), cfg, run); err == nil || !strings.Contains(err.Error(), "meta.json lists records.csv.gz") {
		t.Errorf("seal of an altered run: %v", err)
	}
	os.WriteFile(rec, good, 0o644)
	os.WriteFile(filepath.Join(abs, "late.csv"), []byte("1\n"), 0o644)
	if err := Seal(context.Background(), cfg, run); err == nil || !strings.Contains(err.Error(), "late.csv: not listed in SHA256SUMS") {
		t.Errorf("seal of a run with an added file: %v", err)
	}
	os.Remove(filepath.Join(abs, "late.csv"))
	if _, err := os.Stat(filepath.Join(abs, repro.ManifestFile)); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("a refused seal wrote a manifest")
	}

	// A README.md note written first is sealed with the run.
	os.WriteFile(filepath.Join(abs, repro.NotesFile), []byte("# Run\n\nA note.\n"), 0o644)
	log.Reset()
	if err := Seal(context.Background(), cfg, run); err != nil {
		t.Fatalf("seal: %v", err)
	}
	notes, _ := os.ReadFile(filepath.Join(abs, repro.NotesFile))
	if !strings.HasPrefix(string(notes), "# Run\n\nA note.\n\n## MANIFEST.sha256 (added ") || !strings.Contains(string(notes), "`pqrepro seal` added") {
		t.Errorf("README.md after seal:\n%s", notes)
	}
	_, manifest, err := spec.PinnedSeal(cfg.Root, "ev", settings.Quick)
	b, _ := os.ReadFile(filepath.Join(abs, repro.ManifestFile))
	if err != nil || manifest != repro.HashBytes(b) || !strings.Contains(log.String(), "pinned in experiments/ev.toml [runs] quick") {
		t.Errorf("pin after seal: %q, %v\n%s", manifest, err, log)
	}
	if !bytes.Contains(b, []byte("  README.md\n")) {
		t.Errorf("the manifest does not seal README.md:\n%s", b)
	}
	if e, ok := entryOf(cfg.Root, run); !ok || e.Manifest != manifest || e.Role != runlist.Pinned || !strings.Contains(log.String(), "listed in experiments/ev.runs as pinned") {
		t.Errorf("list after seal: %+v, %v\n%s", e, ok, log)
	}
	// Sealed: the build runs (README.md and the manifest are no stage
	// input: nothing reruns), and a second seal is refused.
	log.Reset()
	if err := Build(context.Background(), cfg); err != nil || !strings.Contains(log.String(), "0 stages ran") {
		t.Errorf("build after seal: %v\n%s", err, log)
	}
	if err := Seal(context.Background(), cfg, run); err == nil || !strings.Contains(err.Error(), "sealed already") {
		t.Errorf("second seal: %v", err)
	}
}

// gitRepo makes dir a git repository with one commit of file.txt.
func gitRepo(t *testing.T, dir string) string {
	t.Helper()
	if exec.Command("git", "--version").Run() != nil {
		t.Skip("git is not installed: the provenance of a checkout cannot be tested")
	}
	os.WriteFile(filepath.Join(dir, "file.txt"), []byte("one\n"), 0o644)
	for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "x"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	out, err := exec.Command("git", "-C", dir, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

// TestAllRecordsTheRepositorysCommit: a run that works in another
// tree (mage all) records the repository's commit and dirty state,
// passed through Config, not "unknown" from the tree it works in.
func TestAllRecordsTheRepositorysCommit(t *testing.T) {
	cfg, _, _ := fakeStudy(t)
	os.MkdirAll(filepath.Join(cfg.Root, "experiments"), 0o755)
	os.WriteFile(filepath.Join(cfg.Root, "experiments/fake.toml"), []byte("[runs]\n"), 0o644)
	head := gitRepo(t, cfg.Root)
	os.WriteFile(filepath.Join(cfg.Root, "file.txt"), []byte("two\n"), 0o644) // dirty
	os.WriteFile(filepath.Join(cfg.Root, repro.SumsFile), nil, 0o644)         // nothing committed yet
	var got provenance.Meta
	studies[0].Run = func(ctx context.Context, c Config, specPath, dataDir string) (string, error) {
		// As a runner does: provenance of the tree it works in.
		tree := filepath.Dir(dataDir)
		if _, err := os.Stat(filepath.Join(tree, ".git")); err == nil {
			t.Errorf("the run's tree %s is a checkout", tree)
		}
		got = provenance.Collect(ctx, provenance.Options{Root: tree, Git: c.Git})
		return "", errors.New("stop here")
	}
	err := All(context.Background(), cfg)
	if err == nil || !strings.Contains(err.Error(), "stop here") {
		t.Fatalf("All: %v", err)
	}
	diff, _ := exec.Command("git", "-C", cfg.Root, "diff", "HEAD", "--binary", "--no-ext-diff", "--no-color").Output()
	if got.Git.Commit != head || !got.Git.Dirty || got.Git.DiffSHA256 != repro.HashBytes(diff) {
		t.Errorf("git = %+v, want commit %s, dirty, diff %s", got.Git, head, repro.HashBytes(diff))
	}
}

func TestWithGit(t *testing.T) {
	// Not a checkout: "unknown", with the reason.
	c, err := Config{Root: t.TempDir()}.withGit(context.Background())
	if err != nil || c.Git.Commit != "unknown" || !strings.Contains(c.Git.WhyUnknown, "not a git checkout") {
		t.Errorf("outside a checkout: %+v, %v", c.Git, err)
	}
	// A checkout git cannot read is an error, not "unknown".
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, ".git"), []byte("gitdir: /nonexistent\n"), 0o644)
	if _, err := (Config{Root: root}).withGit(context.Background()); err == nil || !strings.Contains(err.Error(), "must record the commit") {
		t.Errorf("broken checkout: %v", err)
	}
	// A clean checkout.
	root = t.TempDir()
	head := gitRepo(t, root)
	c, err = Config{Root: root}.withGit(context.Background())
	if err != nil || c.Git.Commit != head || c.Git.Dirty || c.Git.DiffSHA256 != "" {
		t.Errorf("clean checkout: %+v, %v", c.Git, err)
	}
}

// sealedRun records an unpinned sealed run of study ev named after id's
// start, whose meta.json says it started at start (its ID's time when
// zero) and ran for a minute, and returns its folder.
func sealedRun(t *testing.T, root string, named, start time.Time) string {
	t.Helper()
	r, err := repro.NewRun(filepath.Join(root, "data"), "ev", settings.Quick, named)
	if err != nil {
		t.Fatal(err)
	}
	if start.IsZero() {
		start = named
	}
	b := []byte("7\n")
	os.WriteFile(filepath.Join(r.Dir, "records.txt"), b, 0o644)
	if err := provenance.Write(r.Dir, provenance.Meta{Study: "ev", RunID: r.ID, Start: start, End: start.Add(time.Minute), Files: map[string]string{"records.txt": repro.HashBytes(b)}}); err != nil {
		t.Fatal(err)
	}
	if err := r.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := listRun(root, "data/ev/"+r.ID, runlist.Evidence); err != nil {
		t.Fatal(err)
	}
	return "data/ev/" + r.ID
}

// copyTree copies the folder src to dst (both below root).
func copyTree(t *testing.T, root, src, dst string) {
	t.Helper()
	if out, err := exec.Command("cp", "-r", filepath.Join(root, src), filepath.Join(root, dst)).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v: %s", err, out)
	}
}

// TestEveryRunIsEvidence checks that a run nobody pins is checked
// against its own manifest and its meta.json by status, build, verify,
// all and quick, as issue 35 found it was not: a pinned quick run copied
// under a new ID with 64 bytes flipped built, verified and entered
// SHA256SUMS.
func TestEveryRunIsEvidence(t *testing.T) {
	clock := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		// make changes the tree and returns the path the FAIL lines name.
		make func(t *testing.T, root, pinned string) string
		want []string // each line after "FAIL <path>" (status: "ERROR  <path>")
	}{
		{"a pinned run copied under a new ID, 64 bytes flipped", func(t *testing.T, root, pinned string) string {
			return copyFlipped(t, root, pinned, "data/ev/20261201T000000Z-quick")
		}, []string{"/records.csv.gz: content differs from the sealed run", "/MANIFEST.sha256: seals ev/20261130T120000Z-quick, not ev/20261201T000000Z-quick"}},
		{"a pinned run copied under a new ID, unchanged", func(t *testing.T, root, pinned string) string {
			run := "data/ev/20261201T000000Z-quick"
			copyTree(t, root, pinned, run)
			return run
		}, []string{"/MANIFEST.sha256: seals ev/20261130T120000Z-quick, not ev/20261201T000000Z-quick: a manifest was copied between runs"}},
		{"an extra file in an unpinned run", func(t *testing.T, root, _ string) string {
			run := sealedRun(t, root, time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), time.Time{})
			os.WriteFile(filepath.Join(root, run, "more.csv"), []byte("1\n"), 0o644)
			return run
		}, []string{"/more.csv: extra file: not in MANIFEST.sha256"}},
		{"a symbolic link to /etc in an unpinned run", func(t *testing.T, root, _ string) string {
			run := sealedRun(t, root, time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), time.Time{})
			if err := os.Symlink("/etc", filepath.Join(root, run, "sub")); err != nil {
				t.Fatal(err)
			}
			return run
		}, []string{"/sub: extra: not a regular file"}},
		{"a bad MANIFEST line in an unpinned run", func(t *testing.T, root, _ string) string {
			run := sealedRun(t, root, time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), time.Time{})
			f, _ := os.OpenFile(filepath.Join(root, run, repro.ManifestFile), os.O_APPEND|os.O_WRONLY, 0)
			f.WriteString("not a checksum line\n")
			f.Close()
			return run
		}, []string{"/MANIFEST.sha256: data/ev/20261201T000000Z-quick/MANIFEST.sha256:5: not a `sha256sum` line"}},
		{"a pinned run copied under a 2099 ID, 64 bytes flipped (the issue's case)", func(t *testing.T, root, pinned string) string {
			return copyFlipped(t, root, pinned, "data/ev/20991231T000000Z-quick")
		}, []string{"/records.csv.gz: content differs from the sealed run", "/MANIFEST.sha256: seals ev/20261130T120000Z-quick, not ev/20991231T000000Z-quick", ": the run ID 20991231T000000Z-quick lies in the future"}},
		{"a run named for 2099", func(t *testing.T, root, _ string) string {
			return sealedRun(t, root, time.Date(2099, 12, 31, 0, 0, 0, 0, time.UTC), time.Time{})
		}, []string{": the run ID 20991231T000000Z-quick lies in the future (now is 2026-12-03T12:00:00Z)"}},
		{"a run whose meta.json started an hour after its ID", func(t *testing.T, root, _ string) string {
			named := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
			run := sealedRun(t, root, named, named.Add(time.Hour))
			return run + "/meta.json"
		}, []string{": start 2026-12-01T01:00:00Z is not the second the run ID 20261201T000000Z-quick names"}},
		{"a hidden folder beside the studies", func(t *testing.T, root, _ string) string {
			os.MkdirAll(filepath.Join(root, "data/.x"), 0o755)
			os.WriteFile(filepath.Join(root, "data/.x/records.csv"), []byte("1\n"), 0o644)
			return "data/.x"
		}, []string{": not a study folder"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, log, pinned := evidenceRepo(t)
			cfg.Now = func() time.Time { return clock }
			path := tc.make(t, cfg.Root, pinned)
			before := snapshotFiles(t, cfg.Root)
			for name, target := range map[string]func() error{
				"status": func() error { return Status(context.Background(), cfg) },
				"build":  func() error { return Build(context.Background(), cfg) },
				"verify": func() error { return Verify(context.Background(), cfg) },
				"all":    func() error { c := cfg; c.Profile = settings.Full; return All(context.Background(), c) },
				"quick":  func() error { c := cfg; c.Profile = settings.Quick; return All(context.Background(), c) },
			} {
				log.Reset()
				err := target()
				if err == nil {
					t.Errorf("%s: no error:\n%s", name, log)
				}
				for _, w := range tc.want {
					line := "FAIL " + path + w
					if name == "status" {
						line = "ERROR  " + path + w
					}
					if !strings.Contains(log.String(), line) {
						t.Errorf("%s: output lacks %q:\n%s", name, line, log)
					}
				}
				if after := snapshotFiles(t, cfg.Root); fmt.Sprint(after) != fmt.Sprint(before) {
					t.Errorf("%s changed SHA256SUMS, the lock or an output", name)
				}
			}
		})
	}
}

// TestStatusChecksWhatBuildChecks checks that status names what build
// refuses (a stray folder, a spec that does not load, a corrupt lock),
// blames the right culprit, and still lists the leftovers of a killed
// command after an ERROR line (issue 35: it stopped before them).
func TestStatusChecksWhatBuildChecks(t *testing.T) {
	for _, tc := range []struct {
		name   string
		break_ func(t *testing.T, root string)
		is     error    // status's and build's error
		want   []string // in status's output
		not    []string // never in status's output
	}{
		{"a stray folder", func(t *testing.T, root string) {
			os.MkdirAll(filepath.Join(root, "data/ev/zz"), 0o755)
		}, ErrEvidence, []string{
			"  ERROR  data/ev/zz: not a run",
			"do NOT rebuild: 1 entries under data/ that are not sealed runs (ERROR lines above)",
		}, []string{"pinned raw data", "problems in sealed runs"}},
		{"a spec that does not load", func(t *testing.T, root string) {
			studies[0].CheckSpec = func(root string) error {
				return fmt.Errorf("spec %s: timeout_ms = +Inf: must be a finite number of milliseconds", filepath.Join(root, "experiments/ev.toml"))
			}
		}, ErrSpec, []string{
			"  ERROR  experiments/ev.toml: timeout_ms = +Inf: must be a finite number of milliseconds; no ev run can start from it",
			"do NOT rebuild: 1 specs that do not load",
		}, []string{"pinned raw data", "entries under data/"}},
		{"a corrupt lock", func(t *testing.T, root string) {
			os.WriteFile(filepath.Join(root, repro.LockFile), []byte("{garbage"), 0o644)
		}, nil, []string{"  ERROR  the stages' status cannot be computed: "}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, log, _ := evidenceRepo(t)
			tc.break_(t, cfg.Root)
			// A killed command's leftovers: a stage folder, a run in
			// progress and a write lock naming a dead process.
			for _, d := range []string{".stage-123", "data/ev/.incomplete-20261130T130000Z-quick-1"} {
				os.MkdirAll(filepath.Join(cfg.Root, d), 0o755)
			}
			os.MkdirAll(filepath.Join(cfg.Root, treelock.Dir), 0o755)
			os.WriteFile(treelock.Path(cfg.Root, treelock.Write), []byte(fmt.Sprintf("%d 2026-01-02T03:04:05Z net:run\n", deadPID(t))), 0o644)

			err := Status(context.Background(), cfg)
			out := log.String()
			if err == nil || (tc.is != nil && !errors.Is(err, tc.is)) {
				t.Errorf("status: err = %v, want %v", err, tc.is)
			}
			for _, w := range append(tc.want, "leftovers of a killed command", ".stage-123", "data/ev/.incomplete-20261130T130000Z-quick-1", "write.lock names net:run") {
				if !strings.Contains(out, w) {
					t.Errorf("status output lacks %q:\n%s", w, out)
				}
			}
			if tc.is != nil { // the lock's own error names its path
				tc.not = append(tc.not, cfg.Root)
			}
			for _, w := range tc.not {
				if strings.Contains(out, w) {
					t.Errorf("status output says %q:\n%s", w, out)
				}
			}
			if strings.Contains(out, "up to date") || strings.Contains(out, "`mage build` rebuilds") {
				t.Errorf("status advises a build:\n%s", out)
			}
			log.Reset()
			if err := Build(context.Background(), cfg); err == nil || (tc.is != nil && !errors.Is(err, tc.is)) {
				t.Errorf("build: err = %v, want %v:\n%s", err, tc.is, log)
			}
		})
	}
}

// TestStudiesCheckTheirSpecs checks that every registered study's spec is
// validated by status and build (Study.CheckSpec), that the committed
// specs pass, and that net.toml's timeout_ms = inf, which its loader
// accepted (issue 35), does not.
func TestStudiesCheckTheirSpecs(t *testing.T) {
	root := repoRoot(t)
	for _, s := range Studies() {
		if s.CheckSpec == nil {
			t.Errorf("study %s: no CheckSpec: status cannot validate %s", s.Name, spec.Path(s.Name))
			continue
		}
		if err := s.CheckSpec(root); err != nil {
			t.Errorf("study %s: the committed spec: %v", s.Name, err)
		}
		b, err := os.ReadFile(filepath.Join(root, spec.Path(s.Name)))
		if err != nil {
			t.Fatal(err)
		}
		bad := t.TempDir()
		os.MkdirAll(filepath.Join(bad, "experiments"), 0o755)
		if s.Name == netStudy {
			b = bytes.Replace(b, []byte("\ntimeout_ms = 10000\n"), []byte("\ntimeout_ms = inf\n"), 1)
		} else {
			b = append(b, "\nnot_a_key = 1\n"...)
		}
		os.WriteFile(filepath.Join(bad, spec.Path(s.Name)), b, 0o644)
		if err := s.CheckSpec(bad); err == nil {
			t.Errorf("study %s: a broken spec passes", s.Name)
		} else if s.Name == netStudy && !strings.Contains(err.Error(), "timeout_ms = +Inf") {
			t.Errorf("study net: timeout_ms = inf: %v", err)
		}
	}
}

// copyFlipped copies the run folder pinned to run under root and flips 64
// bytes in the middle of its records.csv.gz; it returns run.
func copyFlipped(t *testing.T, root, pinned, run string) string {
	t.Helper()
	copyTree(t, root, pinned, run)
	p := filepath.Join(root, run, "records.csv.gz")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 64 {
		b[len(b)/2-32+i] ^= 0xff
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return run
}
