package reproduce

import (
	"bytes"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"pqrepro/internal/repro"
)

// writeMeta writes a run's meta.json with the fields comparableRuns
// reads; a folder named like a run is sealed too (its meta.json gets
// its ID and times from the name, and a MANIFEST.sha256).
func writeMeta(t *testing.T, root, run, profile, specSHA, design, cpu, verdict string) {
	t.Helper()
	dir := filepath.Join(root, filepath.FromSlash(run))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	d := ""
	if design != "" {
		d = `"spec_design_sha256":"` + design + `",`
	}
	id := path.Base(run)
	if start, err := time.Parse(runIDLayout, strings.Split(id, "-")[0]); err == nil && repro.IsRunID(id) {
		d += `"run_id":"` + id + `","start":"` + start.Add(time.Millisecond).Format(time.RFC3339Nano) + `","end":"` + start.Add(time.Minute).Format(time.RFC3339Nano) + `",`
	}
	body := `{"study":"` + path.Base(path.Dir(run)) + `","profile":"` + profile + `","spec_sha256":"` + specSHA + `",` + d + `"host":{"cpu_model":"` + cpu + `","cores":2,"kernel":"Linux 6.18","arch":"amd64","memory_kb":1000},"go":{"version":"go1.27.3"},"measured":{"machine":{"verdict":"` + verdict + `"}}}`
	if err := os.WriteFile(filepath.Join(dir, "meta.json"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	if repro.IsRunID(id) {
		if _, err := repro.WriteManifest(dir, path.Base(path.Dir(run))+"/"+id); err != nil {
			t.Fatal(err)
		}
	}
}

// runIDLayout is the time part of a run ID (repro.NewRun).
const runIDLayout = "20060102T150405Z"

// TestHostReference: a new run on another host than the pinned run's is
// compared with the newest quiet run of its design and profile on its
// own host kind, whatever the runs' pins made of their spec files;
// busy runs, other designs, other profiles and other hosts are not
// taken; without such a run the pinned reference stays.
func TestHostReference(t *testing.T) {
	root, tree := t.TempDir(), t.TempDir()
	study := Study{Name: "x", Results: func(string, []byte) (Results, error) { return nil, nil }}
	writeMeta(t, root, "data/x/20261201T000000Z-quick", "quick", "s0", "d", "Xeon", "quiet") // pinned
	writeMeta(t, root, "data/x/20261201T010000Z-quick", "quick", "s1", "d", "AMD EPYC", "quiet")
	writeMeta(t, root, "data/x/20261201T020000Z-quick", "quick", "s1", "d", "AMD EPYC", "quiet")
	writeMeta(t, root, "data/x/20261201T030000Z-quick", "quick", "s1", "d", "AMD EPYC", "busy")
	writeMeta(t, root, "data/x/20261201T040000Z-quick", "quick", "s2", "e", "AMD EPYC", "quiet")
	writeMeta(t, root, "data/x/20261201T050000Z-full", "full", "s1", "d", "AMD EPYC", "quiet")
	writeMeta(t, root, "data/x/20261201T060000Z-quick", "quick", "s1", "d", "Other CPU", "quiet")
	// Newer AMD runs of design d that are not sound evidence: named for
	// 2099 (after the clock), with a file that differs from its seal,
	// with an extra file, and with a meta.json that started an hour
	// after its ID.
	writeMeta(t, root, "data/x/20991231T000000Z-quick", "quick", "s1", "d", "AMD EPYC", "quiet")
	writeMeta(t, root, "data/x/20261201T070000Z-quick", "quick", "s1", "d", "AMD EPYC", "quiet")
	altered := filepath.Join(root, "data/x/20261201T070000Z-quick/meta.json")
	if b, err := os.ReadFile(altered); err != nil || os.WriteFile(altered, append(b, '\n'), 0o644) != nil {
		t.Fatal(err)
	}
	writeMeta(t, root, "data/x/20261201T080000Z-quick", "quick", "s1", "d", "AMD EPYC", "quiet")
	os.WriteFile(filepath.Join(root, "data/x/20261201T080000Z-quick/more.csv"), []byte("1\n"), 0o644)
	writeMeta(t, root, "data/x/20261201T090000Z-quick", "quick", "s1", "d", "AMD EPYC", "quiet")
	late := filepath.Join(root, "data/x/20261201T090000Z-quick")
	b, _ := os.ReadFile(filepath.Join(late, "meta.json"))
	os.WriteFile(filepath.Join(late, "meta.json"), bytes.Replace(b, []byte(`"start":"2026-12-01T09`), []byte(`"start":"2026-12-01T10`), 1), 0o644)
	os.Remove(filepath.Join(late, repro.ManifestFile))
	if _, err := repro.WriteManifest(late, "x/20261201T090000Z-quick"); err != nil {
		t.Fatal(err)
	}
	writeMeta(t, tree, "data/x/new", "quick", "s3", "d", "AMD EPYC", "")
	plan := func(ref string) studyPlan {
		return studyPlan{s: study, ref: ref, committed: ref != "", newRun: "data/x/new"}
	}

	var log strings.Builder
	// The root's checks of a run's ID against its meta.json and the
	// clock (pipeline's runTimeProblems), as the two runs that fail them
	// get them.
	idProblems := map[string]repro.Problem{
		"data/x/20991231T000000Z-quick": {Path: "data/x/20991231T000000Z-quick", What: "the run ID 20991231T000000Z-quick lies in the future (now is 2026-12-03T00:00:00Z)"},
		"data/x/20261201T090000Z-quick": {Path: "data/x/20261201T090000Z-quick/meta.json", What: "start 2026-12-01T10:00:00.001Z is not the second the run ID 20261201T090000Z-quick names"},
	}
	cfg := Config{Root: root, Profile: "quick", Log: &log, Now: func() time.Time { return time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC) },
		Store: repro.OpenStore(root, ""),
		RunProblems: func(run string, _ time.Time, _ bool) []repro.Problem {
			if p, ok := idProblems[run]; ok {
				return []repro.Problem{p}
			}
			return nil
		}}
	p := plan("data/x/20261201T000000Z-quick")
	hostReference(cfg, &p, tree)
	if p.ref != "data/x/20261201T020000Z-quick" || p.pinned != "data/x/20261201T000000Z-quick" || p.committed {
		t.Errorf("reference %q, pinned %q, committed %v; want the newest quiet AMD run of design d", p.ref, p.pinned, p.committed)
	}
	if !strings.Contains(p.hostWhy, `was measured on another host (CPU "Xeon" vs "AMD EPYC")`) || !strings.Contains(log.String(), "the newest of 2 quiet quick run(s)") {
		t.Errorf("why %q; log:\n%s", p.hostWhy, log.String())
	}
	for _, want := range []string{
		"host reference of x: run 20991231T000000Z-quick: not sound evidence: data/x/20991231T000000Z-quick: the run ID 20991231T000000Z-quick lies in the future (now is 2026-12-03T00:00:00Z)",
		"host reference of x: run 20261201T070000Z-quick: not sound evidence: data/x/20261201T070000Z-quick/meta.json: content differs from the sealed run",
		"host reference of x: run 20261201T080000Z-quick: not sound evidence: data/x/20261201T080000Z-quick/more.csv: extra file",
		"host reference of x: run 20261201T090000Z-quick: not sound evidence: data/x/20261201T090000Z-quick/meta.json: start 2026-12-01T10:00:00.001Z is not the second the run ID 20261201T090000Z-quick names",
	} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, log.String())
		}
	}

	// No run pinned: a run of this host is still a reference.
	p = plan("")
	hostReference(cfg, &p, tree)
	if p.ref != "data/x/20261201T020000Z-quick" || p.hostWhy != "no quick run is pinned" {
		t.Errorf("without a pin: reference %q, why %q", p.ref, p.hostWhy)
	}

	// The new run's host matches the pinned run's: nothing changes.
	writeMeta(t, tree, "data/x/xeon", "quick", "s3", "d", "Xeon", "")
	p = plan("data/x/20261201T000000Z-quick")
	p.newRun = "data/x/xeon"
	hostReference(cfg, &p, tree)
	if p.ref != "data/x/20261201T000000Z-quick" || !p.committed || p.pinned != "" {
		t.Errorf("same host: reference %q, committed %v, pinned %q", p.ref, p.committed, p.pinned)
	}

	// Another design than every AMD run's, or a host none matches: the
	// pinned reference stays, and the log says why.
	for _, run := range []string{"data/x/design", "data/x/host"} {
		cpu, design := "AMD EPYC", "f"
		if run == "data/x/host" {
			cpu, design = "Third CPU", "d"
		}
		writeMeta(t, tree, run, "quick", "s3", design, cpu, "")
		log.Reset()
		p = plan("data/x/20261201T000000Z-quick")
		p.newRun = run
		hostReference(cfg, &p, tree)
		if p.ref != "data/x/20261201T000000Z-quick" || !p.committed || !strings.Contains(log.String(), "host reference of x: none") {
			t.Errorf("%s: reference %q, committed %v; log:\n%s", run, p.ref, p.committed, log.String())
		}
	}

	// A new run without meta.json: said, nothing changed.
	log.Reset()
	p = plan("data/x/20261201T000000Z-quick")
	p.newRun = "data/x/none"
	hostReference(cfg, &p, tree)
	if p.ref != "data/x/20261201T000000Z-quick" || !strings.Contains(log.String(), "not looked for") || strings.Contains(log.String(), tree) {
		t.Errorf("no meta.json: reference %q; log:\n%s", p.ref, log.String())
	}
}
