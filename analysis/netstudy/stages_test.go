package netstudy

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"pqrepro/datasets/netdata"
	"pqrepro/internal/jsonnum"
	"pqrepro/internal/repro"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

const testRunDir = "data/net/20260101T000000Z-synth"

var testDate = time.Unix(1767225600, 0).UTC()

// synthDesign is the synthetic run's design: the spec's three full-profile
// scenarios with small rounds.
func synthDesign() Design {
	return Design{
		Order: "serial", Groups: []string{"X25519", "X25519MLKEM768"}, Rounds: []int{40, 80},
		CertKey: "ecdsa-p256", Warmup: 1, TimeoutMs: 10000,
		Scenarios: []Scenario{
			{Name: "lan", RTTms: 1, RateBps: 1e9, QueueBytes: 1000000},
			{Name: "wan", RTTms: 31.1, JitterMs: 0.5, LossPct: 0.1, RateBps: 50e6, QueueBytes: 200000},
			{Name: "far", RTTms: 78.7, JitterMs: 1, LossPct: 1, RateBps: 10e6, QueueBytes: 100000},
		},
	}
}

// synthRows draws a dataset from a seeded PCG. Model per handshake:
// ths = RTT + CPU (0.45 ms, +0.35 ms for the hybrid) + serialisation of
// the server flight at the scenario's rate + an AR(1) noise (phi = 0.3,
// so the serial diagnostics have something to find) + with probability
// loss a retransmission penalty of 200 ms + RTT. Bytes: X25519 about 1,923
// frame / 1,179 payload, the hybrid +2,376 / +2,272, with +-1 jitter of the
// ACK pattern. Every 37th attempt of the far scenario fails with a timeout.
func synthRows(d Design) [][]string { return synthRowsWith(d, 42, 0.35) }

// synthRowsWith is synthRows with its seed and the hybrid's extra CPU
// time (ms) as parameters.
func synthRowsWith(d Design, seed uint64, hybridCPU float64) [][]string {
	rng := rand.New(rand.NewPCG(seed, 7))
	var out [][]string
	for _, sc := range d.Scenarios {
		idx := 0
		for _, rd := range d.Rounds {
			for gi, g := range d.Groups {
				noise := 0.0
				for seq := range rd {
					noise = 0.3*noise + rng.NormFloat64()*0.08
					frame := [2]int{713 + rng.IntN(2)*52, 1210}
					payload := [2]int{341, 838}
					cpu := 0.45
					if gi == 1 {
						frame[0] += 1184
						frame[1] += 1192
						payload[0] += 1184
						payload[1] += 1088
						cpu += hybridCPU
					}
					ser := float64(frame[1]*8) / float64(sc.RateBps) * 1e3
					ths := sc.RTTms + cpu + ser + math.Abs(noise)
					retrans := 0
					if rng.Float64() < sc.LossPct/100*4 {
						ths += 200 + sc.RTTms
						retrans = 1
					}
					row := []string{sc.Name, strconv.Itoa(rd), g, strconv.Itoa(seq), strconv.Itoa(idx), strconv.Itoa(1767225600000000000 + idx*1000000),
						"true", "", fmt.Sprintf("10.77.0.1:%d", 40000+idx%20000),
						strconv.FormatInt(int64(ths*1e6), 10), "true", g, "false", strconv.Itoa(retrans),
						"7", "7", strconv.Itoa(frame[0]), strconv.Itoa(frame[1]), strconv.Itoa(payload[0]), strconv.Itoa(payload[1]),
						strconv.FormatInt(int64((ths+sc.RTTms)*1e6), 10), strconv.FormatInt(int64(ths*0.9e6), 10)}
					if sc.Name == "far" && idx%37 == 36 {
						for i := 9; i < len(row); i++ {
							row[i] = ""
						}
						row[6], row[7] = "false", "timeout"
					}
					out = append(out, row)
					idx++
				}
			}
		}
	}
	return out
}

// gz is rows under the header of runs without the toolchain column, as
// records.csv.gz bytes.
func gz(t testing.TB, rows [][]string) []byte { return gzWith(t, netdata.ColumnsV1, rows) }

func gzWith(t testing.TB, header []string, rows [][]string) []byte {
	t.Helper()
	var csvb bytes.Buffer
	w := csv.NewWriter(&csvb)
	w.Write(header)
	w.WriteAll(rows)
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write(csvb.Bytes())
	zw.Close()
	return b.Bytes()
}

// span is a probe's quantiles around a median of ms.
func span(ms float64) map[string]float64 {
	return map[string]float64{"median_ms": ms, "p25_ms": ms * 0.95, "p75_ms": ms * 1.1}
}

func metaJSON(t testing.TB, d Design) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{"study": "net", "run_id": "20260101T000000Z-synth", "profile": "synth", "measured": map[string]any{"design": d, "late": map[string]any{"bound_ns": 1000000},
		"schedule": map[string]any{"parallel_series": 6, "exclusive_scenarios": []string{"lan"}, "wall_s": 150.0},
		// A probe of the primary toolchain, so that the golden holds
		// normalised differences: 0.25 ms of hybrid CPU before, 0.26 after.
		"host_probe": map[string]any{"n": 1000, "warmup": 20,
			"before": map[string]any{"go1.27.3": map[string]any{"X25519": span(0.45), "X25519MLKEM768": span(0.70)}},
			"after":  map[string]any{"go1.27.3": map[string]any{"X25519": span(0.46), "X25519MLKEM768": span(0.72)}}}}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// makeTree writes a run folder into a temporary repository root.
func makeTree(t testing.TB, d Design, rows [][]string) string {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, filepath.FromSlash(testRunDir))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "records.csv.gz"), gz(t, rows), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "meta.json"), metaJSON(t, d), 0o644); err != nil {
		t.Fatal(err)
	}
	writeHygieneFiles(t, dir, rows)
	return root
}

func codeRoot(t testing.TB) string {
	t.Helper()
	abs, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

func build(t testing.TB, root string) error {
	t.Helper()
	e := &repro.Engine{Root: root, CodeRoot: codeRoot(t), Stages: Stages(testRunDir, Params{SourceDateEpoch: testDate}), RawDirs: []string{"data"}, Log: &bytes.Buffer{}}
	_, err := e.Build(context.Background())
	return err
}

var outputs = []string{ResultsFile, TableComparison, TableBytes, TableSerial, TableToolchains, TableHygiene, TableModel, NumbersFile,
	FigureLatency + ".pdf", FigureLatency + ".svg", FigureDiffVsRTT + ".pdf", FigureDiffVsRTT + ".svg", FigureBytes + ".pdf", FigureBytes + ".svg"}

// golden are the outputs compared with testdata (the SVGs and PDFs are
// compared by the second run only: their bytes depend on gonum's
// renderer, the golden text files pin the numbers).
var golden = []string{ResultsFile, TableComparison, TableBytes, TableSerial, TableToolchains, TableHygiene, TableModel, NumbersFile}

func TestStagesGoldenAndDeterministic(t *testing.T) {
	d := synthDesign()
	rows := synthRows(d)
	root1 := makeTree(t, d, rows)
	if err := build(t, root1); err != nil {
		t.Fatal(err)
	}
	root2 := makeTree(t, d, rows)
	if err := build(t, root2); err != nil {
		t.Fatal(err)
	}
	for _, o := range outputs {
		a, err := os.ReadFile(filepath.Join(root1, o))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(root2, o))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs between two runs on the same data", o)
		}
	}
	for _, o := range golden {
		got, _ := os.ReadFile(filepath.Join(root1, o))
		name := filepath.Join("testdata", filepath.Base(o))
		if *update {
			if err := os.WriteFile(name, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(name)
		if err != nil {
			t.Fatalf("%v (run go test -update to create it)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from %s (run go test -update after checking why)", o, name)
		}
	}
	if dir := os.Getenv("PQREPRO_NET_FIGDIR"); dir != "" {
		for _, o := range outputs {
			b, _ := os.ReadFile(filepath.Join(root1, o))
			os.WriteFile(filepath.Join(dir, filepath.Base(o)), b, 0o644)
		}
	}

	// The model's facts must come out of the analysis.
	var res Results
	b, _ := os.ReadFile(filepath.Join(root1, ResultsFile))
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Comparisons) != 6 || len(res.Series) != 12 {
		t.Fatalf("%d comparisons, %d series; want 6 and 12", len(res.Comparisons), len(res.Series))
	}
	for _, c := range res.Comparisons {
		if !c.HigherLatency || !c.HigherBytes || c.A12 < 0.71 || c.A12Magnitude != "large" {
			t.Errorf("%s/%d: hybrid higher %v/%v, A12 %v %s; the model makes it slower and larger", c.Scenario, c.Round, c.HigherLatency, c.HigherBytes, c.A12, c.A12Magnitude)
		}
		if g := float64(c.PayloadGrowthPct); math.Abs(g-100*2272.0/1179) > 0.5 {
			t.Errorf("%s/%d: payload growth %.2f %%, model %.2f %%", c.Scenario, c.Round, g, 100*2272.0/1179)
		}
	}
	if r := res.Reproduced; r.Failed == 0 || r.Fastest != "lan" || r.Slowest != "far" || r.Round != 80 {
		t.Errorf("reproduced = %+v", r)
	}
	for _, s := range res.Series {
		if len(s.Serial.ACF) != 10 || math.IsNaN(float64(s.Serial.LjungBoxP)) || math.IsNaN(float64(s.Serial.RunsP)) {
			t.Errorf("%s/%d/%s: serial diagnostics missing: %+v", s.Scenario, s.Round, s.Group, s.Serial)
		}
	}
}

func TestStagesBadInput(t *testing.T) {
	d := synthDesign()
	good := synthRows(d)
	drop := func(pred func(r []string) bool) [][]string {
		var out [][]string
		for _, r := range good {
			if !pred(r) {
				out = append(out, r)
			}
		}
		return out
	}
	withRow := func(r []string) [][]string {
		return append(append([][]string{}, good...), r)
	}
	unknown := append([]string{}, good[0]...)
	unknown[0] = "moon"
	badNum := append([]string{}, good[0]...)
	badNum[9] = "fast"
	for _, tc := range []struct {
		name string
		rows [][]string
		meta []byte
		want string
	}{
		{"missing group", drop(func(r []string) bool { return r[2] == "X25519MLKEM768" && r[0] == "wan" }), nil, "wan round 40 group X25519MLKEM768: no rows"},
		{"empty round", drop(func(r []string) bool { return r[1] == "80" }), nil, "round 80 group X25519: no rows"},
		{"unknown scenario", withRow(unknown), nil, `scenario "moon" is not one of the run's scenarios`},
		{"bad number", withRow(badNum), nil, `ths_ns "fast"`},
		{"no design", good, []byte(`{"run_id":"x","measured":{}}`), "no measured.design"},
		{"all failed", func() [][]string {
			out := [][]string{}
			for _, r := range good {
				r = append([]string{}, r...)
				if r[0] == "lan" && r[1] == "40" && r[2] == "X25519" {
					for i := 9; i < len(r); i++ {
						r[i] = ""
					}
					r[6], r[7] = "false", "timeout"
				}
				out = append(out, r)
			}
			return out
		}(), nil, "lan round 40 group X25519: 0 successful handshakes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := makeTree(t, d, tc.rows)
			if tc.meta != nil {
				os.WriteFile(filepath.Join(root, filepath.FromSlash(testRunDir), "meta.json"), tc.meta, 0o644)
			}
			err := build(t, root)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one saying %q", err, tc.want)
			}
			for _, o := range outputs {
				if _, err := os.Stat(filepath.Join(root, o)); err == nil {
					t.Errorf("%s written despite the error", o)
				}
			}
		})
	}
}

func TestParamsRejected(t *testing.T) {
	root := makeTree(t, synthDesign(), synthRows(synthDesign()))
	e := &repro.Engine{Root: root, CodeRoot: codeRoot(t), Stages: Stages(testRunDir, Params{MaxLag: -1, SourceDateEpoch: testDate}), RawDirs: []string{"data"}}
	if _, err := e.Build(context.Background()); err == nil || !strings.Contains(err.Error(), "max lag") {
		t.Fatalf("error %v, want one about the max lag", err)
	}
	e = &repro.Engine{Root: root, CodeRoot: codeRoot(t), Stages: Stages("/abs/run", Params{SourceDateEpoch: testDate}), RawDirs: []string{"data"}}
	if _, err := e.Build(context.Background()); err == nil {
		t.Fatal("an absolute run folder was accepted")
	}
}

func FuzzReadRecords(f *testing.F) {
	d := synthDesign()
	f.Add(gz(f, synthRows(d)[:5]))
	f.Add([]byte{})
	f.Add(gz(f, [][]string{{"lan", "x"}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		rows, err := ReadRecords(bytes.NewReader(b), "fuzz")
		if err != nil {
			return
		}
		for _, r := range rows {
			if r.Round < 1 || r.Seq < 0 || (r.HasThs && !(r.ThsMs > 0)) {
				t.Fatalf("accepted an invalid row %+v", r)
			}
		}
	})
}

func TestNumJSON(t *testing.T) {
	for _, tc := range []struct {
		in   Num
		want string
	}{{1.5, "1.5"}, {Num(math.NaN()), "null"}, {Num(math.Inf(1)), "null"}, {0.1, "0.1"}} {
		b, err := json.Marshal(tc.in)
		if err != nil || string(b) != tc.want {
			t.Errorf("Marshal(%v) = %s, %v; want %s", tc.in, b, err, tc.want)
		}
	}
	var n Num
	if err := json.Unmarshal([]byte("null"), &n); err != nil || !math.IsNaN(float64(n)) {
		t.Errorf("null -> %v, %v; want NaN", n, err)
	}
}

func TestMacroSuffix(t *testing.T) {
	for in, want := range map[string]string{"lan": "Lan", "wan-quick": "WanQuick", "far_2": "FarTwo", "a1b": "AOneB"} {
		if got := MacroSuffix(in); got != want {
			t.Errorf("MacroSuffix(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestQuickMacrosExist: the numbers of a quick run (scenarios lan,
// wan-quick, far-quick) define every macro a full run's do, so that the
// paper's text builds at both profiles (\NetDiffPctWan, not
// \NetDiffPctWanQuick).
func TestQuickMacrosExist(t *testing.T) {
	b, err := os.ReadFile("../../results/net.json")
	if err != nil {
		t.Skip("no committed results/net.json")
	}
	// The committed full run's results, with its scenarios renamed.
	defined := func(names ...string) map[string]bool {
		res, err := jsonnum.Decode[Results]("results/net.json", b)
		if err != nil {
			t.Fatal(err)
		}
		rename := map[string]string{}
		for i := range res.Design.Scenarios {
			if i < len(names) {
				rename[res.Design.Scenarios[i].Name] = names[i]
				res.Design.Scenarios[i].Name = names[i]
			}
		}
		for i := range res.Comparisons {
			res.Comparisons[i].Scenario = rename[res.Comparisons[i].Scenario]
		}
		for i := range res.Scenarios {
			res.Scenarios[i].Scenario = rename[res.Scenarios[i].Scenario]
		}
		tex, _ := numbers(res)
		out := map[string]bool{}
		for _, l := range strings.Split(tex, "\n") {
			if name, _, ok := strings.Cut(strings.TrimPrefix(l, `\newcommand{`), "}"); ok && strings.HasPrefix(l, `\newcommand{`) {
				out[name] = true
			}
		}
		return out
	}
	full, quick := defined("lan", "wan", "far"), defined("lan", "wan-quick", "far-quick")
	if !full[`\NetDiffPctWan`] || len(full) < 20 {
		t.Fatalf("full numbers: %v", full)
	}
	for m := range full {
		if !quick[m] {
			t.Errorf("%s is defined at the full profile, not at the quick one", m)
		}
	}
	if both := defined("wan", "wan-quick", "far"); !both[`\NetDiffPctWan`] || !both[`\NetDiffPctWanQuick`] {
		t.Errorf("a run with wan and wan-quick: %v", both)
	}
}
