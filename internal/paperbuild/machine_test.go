package paperbuild

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pqrepro/internal/quiet"
	"pqrepro/internal/repro"
)

func TestMachineTable(t *testing.T) {
	rec := func(verdict, override string) []byte {
		r := quiet.NewFixed(verdict).Rec
		r.Override = override
		b, _ := json.Marshal(map[string]any{"study": "x", "measured": map[string]any{"machine": r, "kernel_drops": 0}})
		return b
	}
	withGit := func(meta []byte, git string) []byte {
		return []byte(strings.TrimSuffix(string(meta), "}") + `,"git":` + git + `}`)
	}
	var runs []machineRun
	for _, c := range []struct {
		name string
		meta []byte
	}{
		{"tls/20261130T120000Z-full", []byte(`{"study":"tls","measured":{"kernel_drops":0}}`)},
		{"tls/20261201T120000Z-quick", withGit(rec(quiet.Quiet, ""), `{"commit":"abc","dirty":false}`)},
		{"net/20261201T120000Z-full", withGit(rec(quiet.Busy, "the only host; load from its own backups"), `{"commit":"abc","dirty":true}`)},
		{"pico/20261201T120000Z-quick", withGit(rec(quiet.Busy, ""), `{"commit":"abc","dirty":true,"diff_sha256":"`+repro.HashBytes([]byte("the diff"))+`"}`)},
	} {
		var diff []byte
		if strings.HasPrefix(c.name, "pico/") {
			diff = []byte("the diff")
		}
		r, err := readMachine(c.name, c.meta, diff)
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, r)
	}
	nums, tab, err := machineTex(runs)
	if err != nil {
		t.Fatal(err)
	}
	tex := nums + tab
	if strings.Contains(nums, `\begin{table}`) || strings.Contains(tab, `\newcommand{\Machine`) {
		t.Errorf("macros and table mixed:\n%s\n%s", nums, tab)
	}
	for _, w := range []string{
		`\newcommand{\MachinePinnedRuns}{4}`, `\newcommand{\MachineQuietRuns}{1}`, `\newcommand{\MachineBusyRuns}{2}`, `\newcommand{\MachineUnrecordedRuns}{1}`,
		`\newcommand{\MachineCleanTreeRuns}{1}`, `\newcommand{\MachineDiffLostRuns}{1}`,
		`\newcommand{\QuietOtherCores}{0.10}`, `\newcommand{\QuietLoadPerCore}{1.0}`, `\newcommand{\QuietStealPercent}{5}`, `\newcommand{\QuietBusySharePercent}{10}`,
		`\texttt{tls/20261130T120000Z-full} & not recorded (run predates the quiet check) & --- & --- & --- &  & not recorded \\`,
		`\texttt{tls/20261201T120000Z-quick} & quiet & 0.20 & 0.01 & 0.0\,\% &  & clean \\`,
		`& busy & 6.00 & 1.20 & 0.0\,\% & the only host; load from its own backups & modified, diff not kept \\`,
		`\texttt{pico/20261201T120000Z-quick} & busy & 6.00 & 1.20 & 0.0\,\% & not pinned by the check (pinned by hand) & modified, diff kept \\`,
		`\label{tab:machine}`,
	} {
		if !strings.Contains(tex, w) {
			t.Errorf("table lacks %q:\n%s", w, tex)
		}
	}
	if _, err := readMachine("x/y", []byte(`{"measured":{"machine":{"verdict":"calm"}}}`), nil); err == nil {
		t.Error("an unknown verdict was accepted")
	}
	if _, err := readMachine("x/y", []byte(`{`), nil); err == nil {
		t.Error("bad JSON was accepted")
	}
}

// The stage reads the meta.json of exactly the run folders the other
// stages read, and none when there are none.
func TestMachineStageInputs(t *testing.T) {
	root := t.TempDir()
	if Machine(root, []*repro.Stage{{Inputs: []string{"data/tls/r1"}}}) != nil {
		t.Error("a stage in a tree without the paper")
	}
	for _, d := range []string{"data/tls/r1", "data/net/r2", "data/pico/r3", "paper/sections"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"data/tls/r1/meta.json", "data/net/r2/meta.json", "paper/main.tex"} {
		if err := os.WriteFile(filepath.Join(root, f), []byte(`{}`), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if Machine(root, []*repro.Stage{{Inputs: []string{"data/tls/r1"}}}) != nil {
		t.Error("a stage for a paper that does not include its table")
	}
	for _, f := range []string{"paper/sections/verify.tex"} {
		if err := os.WriteFile(filepath.Join(root, f), []byte(`\\input{generated/machine.tex}`), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	stages := []*repro.Stage{
		{Inputs: []string{"data/tls/r1/records.csv.gz", "data/tls/r1/meta.json"}},
		{Inputs: []string{"data/net/r2", "results/net.json"}},
		{Inputs: []string{"data/pico/r3"}}, // no meta.json: left out
	}
	s := Machine(root, stages)
	if s == nil || strings.Join(s.Inputs, " ") != "data/net/r2/meta.json data/tls/r1/meta.json" || strings.Join(s.Outputs, " ") != MachineFile+" "+MachineNumbersFile {
		t.Fatalf("stage %+v", s)
	}
	if Machine(root, stages[2:]) != nil {
		t.Error("a stage without any meta.json to read")
	}
}
