package pipeline

import (
	"bufio"
	"compress/gzip"
	"encoding/csv"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"

	"pqrepro/internal/remote"
)

// figSources is what the docs' counts are checked against: the committed
// designs (experiments/<study>.toml), the record tables of the pinned
// runs (results/records/) and the image folders of Study C's pinned runs.
type figSources struct {
	design  map[string]map[string]any // study -> the parsed experiments/<study>.toml
	records map[string]int            // "tls-quick" -> rows of results/records/tls-quick.csv.gz
	groups  map[string]int            // "net-full" -> distinct values of its group column
	images  map[string]int            // Study C profile -> image folders of its pinned run
	sources map[string]string         // slash path -> a Go source a count is read from
	cells   map[string]tlsCells       // "tls-quick" -> the cells of its records
}

// tlsCells is what Study A's records hold per cell (stack, path, key-share
// mode), the emulated paths left out: the primary cell's configurations,
// the number of other cells, and the distinct counts of configurations per
// other cell and of rows per configuration outside the primary cell.
type tlsCells struct {
	primary       int
	others        int
	otherConfigs  []int
	rowsPerConfig []int
}

// readTLSCells reads a Study A record table's cells; the primary cell is
// the one with the most configurations.
func readTLSCells(t *testing.T, name string) tlsCells {
	t.Helper()
	configs := map[string]map[string]int{}
	eachRecord(t, name, func(col func(string) string) {
		if strings.HasPrefix(col("path"), "emulated") {
			return
		}
		cell := col("stack") + "/" + col("path") + "/" + col("hrr")
		if configs[cell] == nil {
			configs[cell] = map[string]int{}
		}
		configs[cell][col("config")]++
	})
	var c tlsCells
	primary := ""
	for cell, m := range configs {
		if len(m) > c.primary {
			c.primary, primary = len(m), cell
		}
	}
	for cell, m := range configs {
		if cell == primary {
			continue
		}
		c.others++
		c.otherConfigs = append(c.otherConfigs, len(m))
		for _, n := range m {
			c.rowsPerConfig = append(c.rowsPerConfig, n)
		}
	}
	slices.Sort(c.otherConfigs)
	slices.Sort(c.rowsPerConfig)
	c.otherConfigs, c.rowsPerConfig = slices.Compact(c.otherConfigs), slices.Compact(c.rowsPerConfig)
	return c
}

// profile returns [profiles.<name>] of a study's design.
func (s figSources) profile(study, name string) map[string]any {
	p, _ := s.design[study]["profiles"].(map[string]any)
	m, _ := p[name].(map[string]any)
	return m
}

// value returns a key of a study profile's design, with numbers as int64
// and lists as []any, as the TOML decoder gives them.
func (s figSources) value(study, profile, key string) any {
	return s.profile(study, profile)[key]
}

// ints returns a list of whole numbers of a study profile's design.
func (s figSources) ints(study, profile, key string) []int64 {
	var out []int64
	l, _ := s.value(study, profile, key).([]any)
	for _, v := range l {
		n, _ := v.(int64)
		out = append(out, n)
	}
	return out
}

// expect compares what a source gives with what the page states.
func expect(what string, got, stated any) error {
	if !reflect.DeepEqual(got, stated) {
		return fmt.Errorf("%s is %v, the page states %v", what, got, stated)
	}
	return nil
}

// sum adds whole numbers.
func sum(ns []int64) int64 {
	var t int64
	for _, n := range ns {
		t += n
	}
	return t
}

// netHandshakesPerGroup is the handshakes per group of a Study B profile:
// every round size in every scenario with every toolchain.
func (s figSources) netHandshakesPerGroup(profile string) int64 {
	return sum(s.ints("net", profile, "rounds")) *
		int64(len(s.value("net", profile, "scenarios").([]any))) *
		int64(len(s.value("net", profile, "toolchains").([]any)))
}

// netTransfers is the connections of a Study B profile's transfer block:
// transfer_round per size, arm (2 groups, 3 with the padded arm),
// congestion control (1 when none is listed), scenario and toolchain.
func (s figSources) netTransfers(profile string) int64 {
	round, _ := s.value("net", profile, "transfer_round").(int64)
	arms := int64(2)
	if padded, _ := s.value("net", profile, "transfer_padded_arm").(bool); padded {
		arms++
	}
	ccs, _ := s.value("net", profile, "transfer_cc").([]any)
	return round * arms * max(int64(len(ccs)), 1) * int64(len(s.ints("net", profile, "transfer_sizes"))) *
		int64(len(s.value("net", profile, "scenarios").([]any))) *
		int64(len(s.value("net", profile, "toolchains").([]any)))
}

// netSerial is the handshakes of a Study B profile's serial controls:
// each control's round size, which its name carries (wan-1000-X25519-...).
func (s figSources) netSerial(profile string) (int64, int) {
	var total int64
	l, _ := s.value("net", profile, "serial_control").([]any)
	size := regexp.MustCompile(`-(\d+)-`)
	for _, v := range l {
		if m := size.FindStringSubmatch(fmt.Sprint(v)); m != nil {
			var n int64
			fmt.Sscan(m[1], &n)
			total += n
		}
	}
	return total, len(l)
}

// A docFigure is a phrase with counts that a page states outside its
// generated blocks, and the check that each count still holds: against the
// design, the pinned runs' records, or what the phrase itself derives.
type docFigure struct {
	page   string
	phrase string // as the page writes it, white space collapsed
	check  func(figSources) error
}

// docFigures are the counts and times the reference pages and
// docs/timings.toml state. Each phrase must be on its page, and every
// figure figureSpans finds on a page must lie inside one of them.
var docFigures = []docFigure{
	// docs/timings.toml: the counts beside the measured times, of the
	// pinned runs' records and of the designs.
	{"docs/timings.toml", "quick 58 s measured (2,880 connections in the 14 cells, 10 rounds;", func(s figSources) error {
		matrix, _ := s.design["tls"]["matrix"].(map[string]any)
		cells, _ := matrix["cells"].([]any)
		return cmpErr(expect("rows of results/records/tls-quick.csv.gz", s.records["tls-quick"], 2880),
			expect("tls [matrix] cells", len(cells), 14),
			expect("rounds of tls quick (n / block)", s.value("tls", "quick", "n").(int64)/s.value("tls", "quick", "block").(int64), int64(10)))
	}},
	{"docs/timings.toml", "(65,680 connections: the 14 cells", func(s figSources) error {
		return expect("rows of results/records/tls-full.csv.gz", s.records["tls-full"], 65680)
	}},
	{"docs/timings.toml", "quick 55 s (840 handshakes:", func(s figSources) error {
		return cmpErr(expect("rows of results/records/net-quick.csv.gz", s.records["net-quick"], 840),
			expect("net quick handshakes (2 groups)", 2*s.netHandshakesPerGroup("quick"), int64(840)))
	}},
	{"docs/timings.toml", "the controlled transfer block's 288 connections up to 50 KiB; then 40 in two serial controls", func(s figSources) error {
		n, k := s.netSerial("quick")
		return cmpErr(expect("net quick transfer connections", s.netTransfers("quick"), int64(288)),
			expect("net quick largest transfer size", slices.Max(s.ints("net", "quick", "transfer_sizes")), int64(50<<10)),
			expect("net quick serial controls", []any{n, k}, []any{int64(40), 2}))
	}},
	{"docs/timings.toml", "full 79 min 27 s (192,000 handshakes, 12 series at a time;", func(s figSources) error {
		return cmpErr(expect("rows of results/records/net-full.csv.gz", s.records["net-full"], 192000),
			expect("net full handshakes (2 groups)", 2*s.netHandshakesPerGroup("full"), int64(192000)),
			expect("net full parallel_series", s.value("net", "full", "parallel_series"), int64(12)))
	}},
	{"docs/timings.toml", "the controlled transfer block's 5,400 connections up to 1 MiB, three arms under CUBIC and BBR; then 3,000 in three serial controls", func(s figSources) error {
		n, k := s.netSerial("full")
		return cmpErr(expect("net full transfer connections", s.netTransfers("full"), int64(5400)),
			expect("net full largest transfer size", slices.Max(s.ints("net", "full", "transfer_sizes")), int64(1<<20)),
			expect("net full serial controls", []any{n, k}, []any{int64(3000), 3}))
	}},
	{"docs/timings.toml", "quick 1 min 53 s (13 images:", func(s figSources) error {
		return cmpErr(expect("image folders of the pinned quick pico run", s.images["quick"], 13),
			expect("images of pico quick", len(s.value("pico", "quick", "images").([]any)), 6))
	}},
	{"docs/timings.toml", "full 20 min 39 s (15 images;", func(s figSources) error {
		return expect("image folders of the pinned full pico run", s.images["full"], 15)
	}},

	// docs/studies.md
	{"docs/studies.md", "(quick: the matrix's 20 configurations in the primary cell and the four in each of the 13 others, each at n = 30 in 10 rounds of 3 with one warm-up per block, 40 connections;", func(s figSources) error {
		c := s.cells["tls-quick"]
		return cmpErr(expect("configurations of the quick run's primary cell", c.primary, 20),
			expect("the quick run's other cells", c.others, 13),
			expect("configurations in each other cell", c.otherConfigs, []int{4}),
			expect("rows per configuration in the quick run", c.rowsPerConfig, []int{40}),
			expect("tls quick n, block, warmup", []any{s.value("tls", "quick", "n"), s.value("tls", "quick", "block"), s.value("tls", "quick", "warmup")}, []any{int64(30), int64(3), int64(1)}))
	}},
	{"docs/studies.md", "full: the matrix at n = 1,000 in the primary cell, the four at 500 in the 13 others)", func(s figSources) error {
		c := s.cells["tls-full"]
		return cmpErr(expect("tls full n", s.value("tls", "full", "n"), int64(1000)),
			expect("tls full other_cells_n", s.value("tls", "full", "other_cells_n"), int64(500)),
			expect("configurations of the full run's primary cell", c.primary, 20),
			expect("the full run's other cells (not emulated)", c.others, 13),
			expect("configurations in each other cell", c.otherConfigs, []int{4}))
	}},
	{"docs/studies.md", "rounds of 1,000, 5,000 and 10,000 handshakes per group, 96,000 in all", func(s figSources) error {
		return cmpErr(expect("net full rounds", s.ints("net", "full", "rounds"), []int64{1000, 5000, 10000}),
			expect("net full handshakes per group", s.netHandshakesPerGroup("full"), int64(96000)),
			expect("rows per group of results/records/net-full.csv.gz", s.records["net-full"]/max(s.groups["net-full"], 1), 96000))
	}},
	{"docs/studies.md", "0, 10, 50, 200 KiB and 1 MiB in the full profile, 0 and 50 KiB in the quick one", func(s figSources) error {
		return cmpErr(expect("net full transfer_sizes", s.ints("net", "full", "transfer_sizes"), []int64{0, 10 << 10, 50 << 10, 200 << 10, 1 << 20}),
			expect("net quick transfer_sizes", s.ints("net", "quick", "transfer_sizes"), []int64{0, 50 << 10}))
	}},
	{"docs/studies.md", "(30 connections per arm and series in full, 4 in quick;", func(s figSources) error {
		return cmpErr(expect("net full transfer_round", s.value("net", "full", "transfer_round"), int64(30)),
			expect("net quick transfer_round", s.value("net", "quick", "transfer_round"), int64(4)))
	}},
	{"docs/studies.md", "caps the transfer series at once: 2 in full", func(s figSources) error {
		return expect("net full transfer_parallel", s.value("net", "full", "transfer_parallel"), int64(2))
	}},
	{"docs/studies.md", "profile 2 signatures of each 128f set and 1 of SHA2-128s", func(s figSources) error {
		return cmpErr(expect("pico full slh_sign_fast", s.value("pico", "full", "slh_sign_fast"), int64(2)),
			expect("pico full slh_sign_small", s.value("pico", "full", "slh_sign_small"), int64(1)))
	}},
	{"docs/studies.md", "SHA2-128f (2 signatures)", func(s figSources) error {
		return expect("pico quick slh_sign_fast", s.value("pico", "quick", "slh_sign_fast"), int64(2))
	}},

	// the other reference pages
	{"docs/targets.md", "(Study B: 96,000 handshakes)", func(s figSources) error {
		return expect("net full handshakes per group", s.netHandshakesPerGroup("full"), int64(96000))
	}},
	{"docs/net-inference.md", "(1,000, 5,000, 10,000 handshakes in the full profile)", func(s figSources) error {
		return expect("net full rounds", s.ints("net", "full", "rounds"), []int64{1000, 5000, 10000})
	}},
	{"docs/study-a-inference.md", "The quick profile runs 10 rounds of 3", func(s figSources) error {
		return cmpErr(expect("tls quick block", s.value("tls", "quick", "block"), int64(3)),
			expect("tls quick rounds (n / block)", s.value("tls", "quick", "n").(int64)/s.value("tls", "quick", "block").(int64), int64(10)))
	}},
	// times: settings and constants of the code, and what they derive
	{"docs/agreement.md", "a span under 1 µs or over 10 s", inSource("experiments/net/netrun/probe.go", `maxProbeSpan += 10 \* time\.Second`)},
	{"docs/config.md", "| `PQREPRO_SETTLE` | `3m` |", inSource("internal/settings/settings.go", `DefaultSettle += 3 \* time\.Minute`)},
	{"docs/quiet.md", "(default 3 min,", inSource("internal/settings/settings.go", `DefaultSettle += 3 \* time\.Minute`)},
	{"docs/quiet.md", "A pre-flight of 3 s (a sample every second) runs before the run folder is created, then a sample every 5 s in the background", allOf(
		inSource("internal/quiet/quiet.go", `o\.Preflight = cmp\.Or\(o\.Preflight, 3\*time\.Second\)`),
		inSource("internal/quiet/quiet.go", `o\.PreflightEvery = cmp\.Or\(o\.PreflightEvery, time\.Second\)`),
		inSource("internal/quiet/quiet.go", `o\.Every = cmp\.Or\(o\.Every, 5\*time\.Second\)`))},
	{"docs/data-remote.md", "(4 retries, waiting 1, 2, 4, 8 s)", remoteTimes},
	{"docs/data-remote.md", "(a 10 MB capture: 2 min 40 s)", remoteTimes},
	{"docs/data-remote.md", "3 blobs: about 8 min for 10 MB blobs; for blobs without a recorded size announcing just under 1 GiB, 3 × 3 h", remoteTimes},
	{"docs/data-remote.md", "about 8 min for 10 MB blobs, 16 min without recorded sizes", remoteTimes},
	{"docs/data-remote.md", "waits of 1, 2, 4, 8 s: 45 s", remoteTimes},
	{"docs/security.md", "`Options.Stall` (default 1 min)", remoteTimes},
	{"docs/security.md", "a 1 GB capture may take 2 h 47 min plus a minute", remoteTimes},
	{"docs/security.md", "one byte every 5 s) ends after 60 s + 1,048,576 B / 100 kB/s = 70.5 s, with 14 bytes kept", remoteTimes},
	{"docs/security.md", "wait up to 5 minutes for another apt", inSource("internal/deps/deps.go", `DefaultLockTimeout = 5 \* time\.Minute`)},
	{"docs/security.md", "(SIGKILL after 15 s)", inSource("experiments/tls/dockernet/daemon.go", `stopProcess\(pid, exited, 15\*time\.Second\)`)},
	{"docs/hardware.md", "waits up to 2 minutes for its drive", inSource("experiments/pico/picorun/run.go", `DefaultBootselWait = 2 \* time\.Minute`)},
	{"docs/hardware.md", "stays silent for 6 s", inSource("experiments/instruments/sshhost/role.go", `"watchdog", 6\*time\.Second`)},
	{"docs/hardware.md", "within 6 s: ServerAliveInterval 2 x ServerAliveCountMax 3", allOf(
		inSource("experiments/instruments/sshhost/ssh.go", `"ServerAliveInterval=2"`),
		inSource("experiments/instruments/sshhost/ssh.go", `"ServerAliveCountMax=3"`))},
	{"docs/studies.md", "against 100 ms, 1 s and 10 s deadlines", inSource("analysis/picostudy/recommendation.go", `DeadlinesMs = \[\]float64\{100, 1000, 10000\}`)},
	{"docs/agreement.md", "at 20–50 handshakes", func(s figSources) error {
		return expect("net quick rounds", s.ints("net", "quick", "rounds"), []int64{20, 50})
	}},
	{"docs/agreement.md", "about the 10,000 round,", func(s figSources) error {
		return expect("net full largest round", slices.Max(s.ints("net", "full", "rounds")), int64(10000))
	}},
	{"docs/agreement.md", "at the quick profile's 10 rounds", func(s figSources) error {
		return expect("tls quick rounds (n / block)", s.value("tls", "quick", "n").(int64)/s.value("tls", "quick", "block").(int64), int64(10))
	}},
	{"docs/studies.md", "each toolchain's endpoint times 1,000 handshakes per group", inSource("experiments/net/netrun/probe.go", `ProbeN += 1000\b`)},
	{"docs/study-a-inference.md", "1,000 handshakes of a configuration", func(s figSources) error {
		return expect("tls full n", s.value("tls", "full", "n"), int64(1000))
	}},
	{"docs/study-a-inference.md", "1,000 runs of Study A's shape (4 configurations x 20 rounds x 50 handshakes", func(s figSources) error {
		return s.validation("1000", "4", "20", "50")
	}},
}

// uncheckedCounts are the counts and times on reference pages that no
// entry of docFigures checks, as "<page>: <figure>", each with the reason
// (an example, the kernel's or Mage's constant, a one-off measurement);
// the list should only shrink.
var uncheckedCounts = map[string]string{
	"docs/net-inference.md: 1 series": "the text of a note the tables print, not a count",
	// an example of the overall line's format, not a figure of a run
	"docs/agreement.md: 31s":    "an example of the overall line's format",
	"docs/agreement.md: 8s":     "an example of the overall line's format",
	"docs/agreement.md: 1m20s":  "an example of the overall line's format",
	"docs/quiet.md: 15 minutes": "the kernel's load averages, not ours",
	"docs/quiet.md: 5 s":        "the kernel's sampling of the run queue, stated beside the pre-flight's (checked)",
	// measured once, with the command beside them
	"docs/architecture.md: 4 s":     "measured: cancellation took 0.1-0.4 s",
	"docs/architecture.md: 2 s":     "measured: about 2 s when rp2040js is killed",
	"docs/architecture.md: 5 s":     "Mage's constant, not this repository's",
	"docs/architecture.md: 3.5 min": "measured: the first build of versitygw",
	"docs/architecture.md: 1.5 s":   "measured: versitygw from the build cache",
	"docs/targets.md: 1 s":          "measured: data:pull's benchmark in performance.md",
	"docs/targets.md: 20 s":         "measured: verify on a fresh clone, in performance.md",
}

// validation compares the simulation of analysis/tlsstudy's
// TestRoundMethodValidation, read from its source, with what
// docs/study-a-inference.md states of it: runs, configurations (the
// baseline and the targets), rounds and handshakes per block.
func (s figSources) validation(runs, configs, rounds, block string) error {
	src := s.sources["analysis/tlsstudy/validate_test.go"]
	find := func(re string) string {
		if m := regexp.MustCompile(re).FindStringSubmatch(src); m != nil {
			return m[1]
		}
		return "?"
	}
	effects := strings.Count(find(`valEffects += \[\]float64\{([^}]*)\}`), ",") + 2 // the targets and the baseline
	return cmpErr(
		expect("TestRoundMethodValidation's runs", find(`validate\(t, (\d+),`), runs),
		expect("the simulation's configurations", fmt.Sprint(effects), configs),
		expect("valRounds", find(`valRounds += (\d+)`), rounds),
		expect("valBlock", find(`valBlock += (\d+)`), block))
}

// cmpErr returns the first error of errs.
func cmpErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// countOf matches a count of things as the pages write one: "2,880
// connections", "8 images", "1,000, 5,000 and 10,000 handshakes" (its
// last number).
var countOf = regexp.MustCompile(`(^|[^\w.,-])(\d[\d,]*) (images?|connections?|handshakes?|signatures?|configurations?|cells?|series|rounds?|runs?)\b`)

// countPages are the pages whose counts of things must be checked: the
// reference pages and docs/timings.toml, not the dated notes (kept as
// written), not performance.md (each figure a measurement beside the
// command that repeats it) and not the README (TestReadmeStatesNoUncheckedFigure).
func countPages(t *testing.T) []string {
	var out []string
	for _, p := range docPages(t) {
		if isNote(p) || p == "README.md" || p == "docs/performance.md" {
			continue
		}
		out = append(out, p)
	}
	return append(out, timingsFile)
}

// figureProblems returns what is wrong with the pages' counts: a phrase of
// docFigures not on its page, a check that fails against src, or a count
// on a page inside no phrase and not in uncheckedCounts. The study rows of
// docs/targets.md are generated from docs/timings.toml and skipped.
func figureProblems(pages map[string]string, figures []docFigure, unchecked map[string]string, src figSources) []string {
	flat := map[string]string{}
	for p, text := range pages {
		if strings.HasSuffix(p, ".md") {
			lines := outsideCode(text)
			if p == targetsDoc {
				if first, last, err := studyRowSpan(lines); err == nil {
					lines = slices.Concat(lines[:first], lines[last+1:])
				}
			}
			text = strings.Join(lines, "\n")
		} else {
			text = stripTomlComments(text)
		}
		flat[p] = strings.Join(strings.Fields(text), " ")
	}
	var out []string
	covered := map[string][][2]int{}
	for _, f := range figures {
		text, ok := flat[f.page]
		if !ok {
			continue
		}
		i := strings.Index(text, f.phrase)
		if i < 0 {
			out = append(out, fmt.Sprintf("%s no longer states %q: update the phrase in docFigures (pipeline/docfigures_test.go) with its check", f.page, f.phrase))
			continue
		}
		covered[f.page] = append(covered[f.page], [2]int{i, i + len(f.phrase)})
		if err := f.check(src); err != nil {
			out = append(out, fmt.Sprintf("%s states %q, which is stale: %v", f.page, f.phrase, err))
		}
	}
	for _, p := range slices.Sorted(mapKeys(flat)) {
		for _, span := range figureSpans(p, flat[p]) {
			figure := flat[p][span[0]:span[1]]
			if _, ok := unchecked[p+": "+figure]; ok {
				continue
			}
			inside := slices.ContainsFunc(covered[p], func(c [2]int) bool { return span[0] >= c[0] && span[1] <= c[1] })
			if !inside {
				out = append(out, fmt.Sprintf("%s states %q, which no test checks: generate it, check it in docFigures (pipeline/docfigures_test.go), or link to the page that holds it", p, figure))
			}
		}
	}
	return out
}

// figureSpans returns where a page's flattened text states a count of
// things (countOf) or a time (duration, as TestDocsRunTimesFromTimings
// reads one); docs/timings.toml's times are the measurements themselves.
func figureSpans(page, flat string) [][2]int {
	var out [][2]int
	for _, m := range countOf.FindAllStringSubmatchIndex(flat, -1) {
		out = append(out, [2]int{m[4], m[7]})
	}
	if page == timingsFile {
		return out
	}
	for _, m := range duration.FindAllStringSubmatchIndex(flat, -1) {
		if !strings.Contains(flat[m[4]:m[5]], ", ") { // "t(0.975, m - 1)"
			out = append(out, [2]int{m[4], m[5]})
		}
	}
	return out
}

// inSource checks that a file of the repository (a slash path) matches a
// regular expression: the setting or constant a page's time states.
func inSource(file, pattern string) func(figSources) error {
	return func(figSources) error {
		b, err := os.ReadFile(filepath.Join("..", filepath.FromSlash(file)))
		if err != nil {
			return err
		}
		if !regexp.MustCompile(pattern).Match(b) {
			return fmt.Errorf("%s no longer matches %s", file, pattern)
		}
		return nil
	}
}

// allOf runs every check.
func allOf(checks ...func(figSources) error) func(figSources) error {
	return func(s figSources) error {
		for _, c := range checks {
			if err := c(s); err != nil {
				return err
			}
		}
		return nil
	}
}

// blobTime is a blob's deadline in seconds with remote's defaults: the
// stall time (a minute) plus its size at remote.DefaultMinRate.
func blobTime(size float64) float64 {
	return 60 + size/remote.DefaultMinRate
}

// remoteTimes compares the worked times of docs/data-remote.md and
// docs/security.md with remote's defaults: 4 retries waiting 1, 2, 4, 8 s
// (45 s for 3 blobs), a minute's stall plus the size at 100 kB/s.
func remoteTimes(figSources) error {
	waits := 1.0 + 2 + 4 + 8
	return cmpErr(
		expect("remote.DefaultMinRate (B/s)", remote.DefaultMinRate, 100_000),
		inSource("internal/remote/transfer.go", `case o\.Retries == 0:\s*return 4\b`)(figSources{}),
		inSource("internal/remote/transfer.go", `wait <= 0 \{\s*wait = time\.Second`)(figSources{}),
		inSource("internal/remote/transfer.go", `o\.Stall <= 0 \{\s*return time\.Minute`)(figSources{}),
		expect("a 10 MB capture's time (s)", blobTime(10e6), 160.0),                               // 2 min 40 s
		expect("3 blobs of 10 MB (min, rounded)", int(3*blobTime(10e6)/60+0.5), 8),                // about 8 min
		expect("a blob just under 1 GiB (h, rounded)", int(blobTime(1<<30)/3600+0.5), 3),          // 3 × 3 h
		expect("3 blobs of 5 one-minute attempts (min, rounded)", int(3*(5*60+waits)/60+0.5), 16), // 16 min
		expect("3 blobs' waits (s)", 3*waits, 45.0),
		expect("1 GB (h min, rounded)", fmt.Sprintf("%d h %d min", int(1e9/remote.DefaultMinRate)/3600, (int(1e9/remote.DefaultMinRate)%3600+30)/60), "2 h 47 min"),
		expect("1 MiB dripped at a byte per 5 s (s, one decimal)", fmt.Sprintf("%.1f", blobTime(1<<20)), "70.5"),
		expect("bytes kept at a byte per 5 s", int(blobTime(1<<20)/5), 14),
	)
}

// stripTomlComments drops the comment lines of a TOML file.
func stripTomlComments(text string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "#") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// mapKeys returns the keys of a map.
func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// loadFigSources reads what the docs' counts are checked against.
func loadFigSources(t *testing.T) figSources {
	t.Helper()
	s := figSources{design: map[string]map[string]any{}, records: map[string]int{}, groups: map[string]int{}, images: map[string]int{},
		sources: map[string]string{"analysis/tlsstudy/validate_test.go": readDoc(t, "analysis/tlsstudy/validate_test.go")}}
	for _, study := range []string{"tls", "net", "pico"} {
		var m map[string]any
		if _, err := toml.Decode(readDoc(t, "experiments/"+study+".toml"), &m); err != nil {
			t.Fatal(err)
		}
		s.design[study] = m
	}
	for _, name := range []string{"tls-quick", "tls-full", "net-quick", "net-full"} {
		rows, groups := recordCount(t, name)
		s.records[name], s.groups[name] = rows, groups
	}
	s.cells = map[string]tlsCells{"tls-quick": readTLSCells(t, "tls-quick"), "tls-full": readTLSCells(t, "tls-full")}
	runs, _ := s.design["pico"]["runs"].(map[string]any)
	for profile, pin := range runs {
		run, _, _ := strings.Cut(fmt.Sprint(pin), "@")
		entries, err := os.ReadDir(filepath.Join("..", "data", "pico", run))
		if err != nil {
			t.Fatalf("Study C's pinned %s run: %v", profile, err)
		}
		for _, e := range entries {
			if e.IsDir() {
				s.images[profile]++
			}
		}
	}
	return s
}

// eachRecord calls fn for each row of results/records/<name>.csv.gz, with
// a function from a column's name to the row's value.
func eachRecord(t *testing.T, name string, fn func(col func(string) string)) {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "results", "records", name+".csv.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	r := csv.NewReader(bufio.NewReader(z))
	header, err := r.Read()
	if err != nil {
		t.Fatal(err)
	}
	for {
		rec, err := r.Read()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		fn(func(name string) string {
			if i := slices.Index(header, name); i >= 0 {
				return rec[i]
			}
			return ""
		})
	}
}

// recordCount returns the rows of results/records/<name>.csv.gz and the
// distinct values of its group column.
func recordCount(t *testing.T, name string) (rows, groups int) {
	t.Helper()
	seen := map[string]bool{}
	eachRecord(t, name, func(col func(string) string) {
		rows++
		seen[col("group")] = true
	})
	return rows, len(seen)
}

// TestDocsCountsChecked: every count of things (images, connections,
// handshakes, rounds ...) that docs/timings.toml and the reference pages
// state, and every time the reference pages state, is checked (docFigures)
// or listed with its reason in uncheckedCounts. Checks read the designs,
// the pinned runs' records, Study C's pinned images and the code's settings.
func TestDocsCountsChecked(t *testing.T) {
	pages := map[string]string{}
	for _, p := range countPages(t) {
		pages[p] = readDoc(t, p)
	}
	for _, p := range figureProblems(pages, docFigures, uncheckedCounts, loadFigSources(t)) {
		t.Error(p)
	}
}

// TestFigureProblemsCatchesStale plants stale pages and a changed design
// and checks that figureProblems names each.
func TestFigureProblemsCatchesStale(t *testing.T) {
	src := loadFigSources(t)
	real := map[string]string{}
	for _, p := range countPages(t) {
		real[p] = readDoc(t, p)
	}
	if got := figureProblems(real, docFigures, uncheckedCounts, src); len(got) != 0 {
		t.Fatalf("the committed pages have problems: %v", got)
	}
	planted := func(page, old, new string) map[string]string {
		pages := maps.Clone(real)
		if !strings.Contains(pages[page], old) {
			t.Fatalf("%s has no %q to plant over", page, old)
		}
		pages[page] = strings.Replace(pages[page], old, new, 1)
		return pages
	}
	changed := func(study, profile, key string, v any) figSources {
		s := src
		s.design = maps.Clone(src.design)
		d := maps.Clone(s.design[study])
		profiles := maps.Clone(d["profiles"].(map[string]any))
		p := maps.Clone(profiles[profile].(map[string]any))
		p[key] = v
		profiles[profile] = p
		d["profiles"] = profiles
		s.design[study] = d
		return s
	}
	for _, c := range []struct {
		name  string
		pages map[string]string
		src   figSources
		want  string
	}{
		{"the quick transfer sizes as they were", planted("docs/studies.md", "0 and 50 KiB in the quick one", "10 KiB and 200 KiB in the quick one"), src,
			`docs/studies.md no longer states "0, 10, 50, 200 KiB and 1 MiB in the full profile, 0 and 50 KiB in the quick one"`},
		{"verify.md's old count of Study C's images", planted("docs/verify.md", "\n", "\nStudy C's quick run: 5 images.\n"), src,
			`docs/verify.md states "5 images", which no test checks`},
		{"verify.md's old time of the full all", planted("docs/verify.md", "\n", "\nThe full `all` takes about 1 h 10 min.\n"), src,
			`docs/verify.md states "1 h 10 min", which no test checks`},
		{"a deadline worked out wrongly", planted("docs/security.md", "2 h 47 min", "2 h 30 min"), src,
			`docs/security.md no longer states "a 1 GB capture may take 2 h 47 min plus a minute"`},
		{"a changed image count in timings.toml", planted(timingsFile, "(15 images;", "(8 images;"), src,
			`docs/timings.toml no longer states "full 20 min 39 s (15 images;"`},
		{"the design's transfer round changed", real, changed("net", "quick", "transfer_round", int64(3)),
			`docs/studies.md states "(30 connections per arm and series in full, 4 in quick;", which is stale: net quick transfer_round is 3, the page states 4`},
		{"the design's rounds changed", real, changed("net", "full", "rounds", []any{int64(1000), int64(5000)}),
			`docs/timings.toml states "full 79 min 27 s (192,000 handshakes, 12 series at a time;", which is stale: net full handshakes (2 groups) is 72000, the page states 192000`},
	} {
		got := figureProblems(c.pages, docFigures, uncheckedCounts, c.src)
		if !slices.ContainsFunc(got, func(p string) bool { return strings.HasPrefix(p, c.want) }) {
			t.Errorf("%s: figureProblems = %q, want one starting %q", c.name, got, c.want)
		}
	}
}
