package picostudy

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"pqrepro/datasets/picodata"
	"pqrepro/internal/repro"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden/")

const (
	testRunID  = "20261202T062838Z-quick"
	testRunDir = "data/pico/" + testRunID
)

// testEpoch is the figures' date: 2026-01-01, the project default.
var testEpoch = time.Unix(1767225600, 0).UTC()

// repoRoot is the repository root, for the code hashes and the pqm4 table.
func repoRoot(t testing.TB) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func copyTree(t testing.TB, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		out := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(out, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(out, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// testTree makes a repository tree in a temporary directory holding the
// recorded run (testdata/run) and the pqm4 table.
func testTree(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	copyTree(t, "testdata/run", filepath.Join(dir, testRunDir))
	b, err := os.ReadFile(filepath.Join(repoRoot(t), DefaultPQM4))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, DefaultPQM4)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, DefaultPQM4), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func engine(t testing.TB, root string, p Params) *repro.Engine {
	if p.SourceDateEpoch.IsZero() {
		p.SourceDateEpoch = testEpoch
	}
	return &repro.Engine{Root: root, CodeRoot: repoRoot(t), Stages: Stages(testRunDir, p),
		RawDirs: []string{"data"}, Log: io.Discard}
}

var allOutputs = []string{ResultsFile,
	FigureSign + ".pdf", FigureSign + ".svg", FigureOps + ".pdf", FigureOps + ".svg",
	FigureStack + ".pdf", FigureStack + ".svg", FigureDeadline + ".pdf", FigureDeadline + ".svg",
	TableOps, TableVersusPaper, TableM4, TableDeadlines, TableConfigurations, TableSigning, NumbersFile}

func readOutputs(t testing.TB, root string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, f := range allOutputs {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatalf("output %s: %v", f, err)
		}
		out[f] = b
	}
	return out
}

// TestStagesGolden runs the three stages through a real engine on the
// recorded quick run and compares every output with testdata/golden/; a
// second build from scratch in another tree gives the same bytes.
func TestStagesGolden(t *testing.T) {
	ctx := context.Background()
	root := testTree(t)
	if _, err := engine(t, root, Params{}).Build(ctx); err != nil {
		t.Fatal(err)
	}
	got := readOutputs(t, root)
	for _, f := range allOutputs {
		if strings.HasSuffix(f, ".pdf") {
			// The PDF bytes belong to internal/render (fonts, compression);
			// the SVG goldens pin the figures' content. Here: a PDF dated
			// SOURCE_DATE_EPOCH (checked byte for byte across builds below).
			if !bytes.HasPrefix(got[f], []byte("%PDF-")) || !bytes.Contains(got[f], []byte("D:20260101")) {
				t.Errorf("%s is not a PDF dated 2026-01-01", f)
			}
			continue
		}
		g := filepath.Join("testdata", "golden", filepath.FromSlash(f))
		if *update {
			if err := os.MkdirAll(filepath.Dir(g), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(g, got[f], 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(g)
		if err != nil {
			t.Fatalf("%v (run go test -update to create the golden files)", err)
		}
		if !bytes.Equal(got[f], want) {
			t.Errorf("%s differs from %s (check why, then go test -update)", f, g)
		}
	}

	// Byte-identical on a second, independent build.
	root2 := testTree(t)
	if _, err := engine(t, root2, Params{}).Build(ctx); err != nil {
		t.Fatal(err)
	}
	for f, b := range readOutputs(t, root2) {
		if !bytes.Equal(b, got[f]) {
			t.Errorf("%s differs between two builds", f)
		}
	}
	// The engine's verification re-derives every output in another tree.
	rep0, err := engine(t, root, Params{}).Verify(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep0.Problems) > 0 || rep0.Rederived != len(allOutputs) {
		t.Errorf("verify: %d re-derived, problems %v", rep0.Rederived, rep0.Problems)
	}
	// A second build in the same tree runs nothing.
	rep, err := engine(t, root, Params{}).Build(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Ran) != 0 {
		t.Errorf("second build ran %v, want nothing", rep.Ran)
	}
}

// TestResultsContent checks the results against the recorded data by
// hand-computed facts rather than golden bytes.
func TestResultsContent(t *testing.T) {
	root := testTree(t)
	if _, err := engine(t, root, Params{}).Build(context.Background(), "pico:analyze"); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	r, err := DecodeResults(ResultsFile, b)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Emulated || r.Label != "emulated" || r.Board != "rp2040js 1.4.1 (emulated)" || r.ClockHz != 133000000 {
		t.Errorf("label %q board %q emulated %v clock %d", r.Label, r.Board, r.Emulated, r.ClockHz)
	}
	if len(r.Schemes) != 10 {
		t.Fatalf("%d schemes, want the 6 post-quantum, 3 classical and SPHINCS+-SHA2-128f", len(r.Schemes))
	}
	// SPHINCS+-SHA2-128f: two signatures, the same time to within a few
	// hundred cycles, missing 100 ms and 1 s and meeting 10 s outright.
	rec := r.Recommendation
	if rec == nil || strings.Join(rec.NotMeasured, ",") != "sphincs-shake-128f,sphincs-sha2-128s" {
		t.Fatalf("recommendation %+v", rec)
	}
	spx, _ := rowOf(rec, "sphincs-sha2-128f")
	if spx.N != 2 || !spx.Constant || spx.MeanMs < 7000 || spx.MeanMs > 8500 {
		t.Errorf("SPHINCS+-SHA2-128f row %+v", spx)
	}
	for i, want := range []string{"missed", "missed", "met"} {
		if spx.Deadlines[i].Verdict != want {
			t.Errorf("SPHINCS+-SHA2-128f within %v ms: %s, want %s", spx.Deadlines[i].DeadlineMs, spx.Deadlines[i].Verdict, want)
		}
	}
	if ml, _ := rowOf(rec, "ml-dsa-44"); ml.Constant || ml.N != 10 {
		t.Errorf("ML-DSA-44 row %+v: ten signatures whose time varies", ml)
	}
	kem := r.Schemes["ml-kem-512"]
	if kem.Family != "kem" || kem.Ops["keygen"].N != 5 || kem.Ops["decaps"].PeakStackBytes < 8000 {
		t.Errorf("ml-kem-512 = %+v", kem)
	}
	// The exchange is the sum of the three means; energy = time x 79.2 mW.
	x := r.Exchanges["ml-kem-512"]
	sum := *kem.Ops["keygen"].MeanMs + *kem.Ops["encaps"].MeanMs + *kem.Ops["decaps"].MeanMs
	if d := x.Ms - sum; d > 1e-6 || d < -1e-6 {
		t.Errorf("exchange %v, sum of means %v", x.Ms, sum)
	}
	if d := x.EnergyMJ - x.Ms*79.2/1000; d > 1e-6 || d < -1e-6 {
		t.Errorf("energy %v mJ for %v ms", x.EnergyMJ, x.Ms)
	}
	// ECDH ran: its exchange is the firmware's measured one, and the
	// ratios follow from the two exchanges.
	e := r.Exchanges["ecdh-p256"]
	if e == nil || e.Method != "measured" || *r.Schemes["ecdh-p256"].Ops["exchange"].MeanMs != e.Ms {
		t.Fatalf("ecdh exchange %+v", e)
	}
	if v := r.Versus["ml-kem-512"]; v == nil || !near(v.Speedup, e.Ms/x.Ms) || !near(v.EnergySaving, 1-x.EnergyMJ/e.EnergyMJ) {
		t.Errorf("versus %+v", v)
	}
	// The paper: an ML-DSA-44 sign cycle uses less energy than ECDSA P-256's.
	if v, ok := r.SignVerifyVsECDSA["ml-dsa-44"]; !ok || !near(v, r.SignVerify["ml-dsa-44"].EnergyMJ/r.SignVerify["ecdsa-p256"].EnergyMJ) {
		t.Errorf("sign+verify vs ECDSA %v", r.SignVerifyVsECDSA)
	}
	if r.Host == nil || r.Host.Ops["ml-kem-512"]["keygen"]["circl"] == nil || r.NotMeasured["host"] != "" {
		t.Errorf("host block %+v, not measured %v", r.Host, r.NotMeasured)
	}
	sign := r.Schemes["ml-dsa-87"].Ops["sign"]
	if sign.N != 10 || len(sign.SamplesMs) != 10 || *sign.MaxMs < *sign.P99Ms || *sign.P99Ms < *sign.P95Ms {
		t.Errorf("ml-dsa-87 sign = %+v", sign)
	}
	if len(r.M4.Rows) != 18 || r.M4.RatioMin <= 1 || r.M4.RatioMax < r.M4.RatioMin {
		t.Errorf("M4 comparison %+v", r.M4)
	}
	if r.Schemes["ml-kem-768"].Code.FlashBytes == 0 || r.Schemes["ml-kem-768"].ImageFlashBytes == 0 {
		t.Errorf("no code size for ml-kem-768")
	}
}

// TestWithoutClassical drops the classical image and the host timings:
// the comparisons with ECDH and the host column are recorded as not
// measured, never invented.
func TestWithoutClassical(t *testing.T) {
	root := testTree(t)
	for _, f := range []string{"classic", "host-timings.csv.gz"} {
		if err := os.RemoveAll(filepath.Join(root, testRunDir, f)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := engine(t, root, Params{}).Build(context.Background()); err != nil {
		t.Fatal(err)
	}
	r, err := DecodeResults(ResultsFile, mustRead(t, filepath.Join(root, ResultsFile)))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Versus) != 0 || r.NotMeasured["mlkem_vs_ecdh"] == "" || r.Exchanges["ecdh-p256"] != nil || r.Host != nil || r.NotMeasured["host"] == "" {
		t.Errorf("versus %v, host %v, not measured %v", r.Versus, r.Host, r.NotMeasured)
	}
	for _, p := range r.Published {
		if (strings.HasPrefix(p.Key, "ecdh") || strings.Contains(p.Key, "vs_ecdh")) && p.Ours != nil {
			t.Errorf("published %s has ours = %v without ECDH", p.Key, *p.Ours)
		}
	}
	nums := mustRead(t, filepath.Join(root, NumbersFile))
	if !bytes.Contains(nums, []byte(`\newcommand{\PicoMlkemFiveTwelveVsEcdhSpeedup}{---}`)) {
		t.Errorf("the speed-up macro should say not measured:\n%s", nums)
	}
	ops := mustRead(t, filepath.Join(root, TableOps))
	if bytes.Contains(ops, []byte("Host")) {
		t.Error("the operations table has a host column without host timings")
	}
}

// badRun writes the recorded run, lets edit damage it, and runs the stages;
// it returns the error and checks that no output exists.
func badRun(t *testing.T, edit func(runDir string)) error {
	t.Helper()
	root := testTree(t)
	edit(filepath.Join(root, testRunDir))
	_, err := engine(t, root, Params{}).Build(context.Background())
	for _, f := range allOutputs {
		if _, serr := os.Stat(filepath.Join(root, f)); serr == nil {
			t.Errorf("output %s exists after a failed analysis", f)
		}
	}
	if err == nil {
		t.Fatal("analysis of a damaged run succeeded")
	}
	return err
}

// rewriteLog rewrites an image's serial log line by line through f, with
// checksums recomputed, so that only the meaning changes.
func rewriteLog(t *testing.T, path string, f func(l picodata.Line) []picodata.Line) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	for _, s := range strings.SplitAfter(string(b), "\n") {
		l, err := picodata.ParseLine(strings.TrimRight(s, "\r\n"))
		if err != nil {
			out.WriteString(s)
			continue
		}
		for _, nl := range f(l) {
			out.WriteString(picodata.FormatLine(nl.Seq, nl.Kind, nl.Fields...) + "\n")
		}
	}
	if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestBadInput(t *testing.T) {
	cases := []badCase{
		{"missing scheme", func(t *testing.T, dir string) {
			if err := os.RemoveAll(filepath.Join(dir, "mldsa65")); err != nil {
				t.Fatal(err)
			}
		}, "missing scheme ml-dsa-65"},
		{"truncated log", func(t *testing.T, dir string) {
			p := filepath.Join(dir, "mlkem", "serial.log")
			b, _ := os.ReadFile(p)
			if err := os.WriteFile(p, b[:len(b)/2], 0o644); err != nil {
				t.Fatal(err)
			}
		}, "mlkem/serial.log: the run is not whole"},
		{"device failure line", func(t *testing.T, dir string) {
			// Insert an err line after the first decaps, renumbering the rest.
			shift := uint64(0)
			rewriteLog(t, filepath.Join(dir, "mlkem", "serial.log"), func(l picodata.Line) []picodata.Line {
				l.Seq += shift
				if op, _ := l.Get("op"); l.Kind == picodata.KindMeasure && op == "decaps" && shift == 0 {
					shift = 1
					return []picodata.Line{l, {Seq: l.Seq + 1, Kind: picodata.KindError, Fields: []picodata.Field{
						{Key: "scheme", Value: "ml-kem-512"}, {Key: "op", Value: "decaps"}, {Key: "i", Value: "0"},
						{Key: "msg", Value: "shared_secret_mismatch"}}}}
				}
				return []picodata.Line{l}
			})
		}, "device failure line: ml-kem-512 decaps iteration 0: shared_secret_mismatch"},
		{"records disagree with the log", func(t *testing.T, dir string) {
			src := filepath.Join(dir, "mldsa44", "measurements.csv.gz")
			b, _ := os.ReadFile(filepath.Join(dir, "mldsa65", "measurements.csv.gz"))
			if err := os.WriteFile(src, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}, "differ from the"},
		{"failed host check", func(t *testing.T, dir string) {
			p := filepath.Join(dir, "mldsa87", "verify.json")
			b, _ := os.ReadFile(p)
			b = bytes.Replace(b, []byte(`"ok": true`), []byte(`"ok": false`), 1)
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}, "host check ml-dsa-87"},
		{"missing size report", func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, "mlkem", "size.json")); err != nil {
				t.Fatal(err)
			}
		}, "mlkem/size.json is missing"},
		{"not a pico meta.json", func(t *testing.T, dir string) {
			p := filepath.Join(dir, "meta.json")
			b, _ := os.ReadFile(p)
			if err := os.WriteFile(p, bytes.Replace(b, []byte(`"study": "pico"`), []byte(`"study": "tls"`), 1), 0o644); err != nil {
				t.Fatal(err)
			}
		}, "not a pico run"},
		{"gzip truncated", func(t *testing.T, dir string) {
			p := filepath.Join(dir, "mlkem", "measurements.csv.gz")
			b, _ := os.ReadFile(p)
			if err := os.WriteFile(p, b[:len(b)-12], 0o644); err != nil {
				t.Fatal(err)
			}
		}, "measurements.csv.gz"},
	}
	runBadCases(t, cases)
}

// badCase is a damage to the recorded run and what the error must say.
type badCase struct {
	name string
	edit func(t *testing.T, dir string)
	want string
}

// runBadCases runs each case as a subtest: the analysis fails with an
// ErrInput that says what the case wants, and writes no output.
func runBadCases(t *testing.T, cases []badCase) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := badRun(t, func(dir string) { c.edit(t, dir) })
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not say %q", err, c.want)
			}
			if !errors.Is(err, ErrInput) {
				t.Errorf("error %v does not wrap ErrInput", err)
			}
		})
	}
}

func TestBadPQM4(t *testing.T) {
	for name, body := range map[string]string{
		"empty":       "",
		"bad header":  "a,b,c,d,e,f,g,h\n",
		"bad number":  "scheme,op,impl,executions,cycles_mean,cycles_min,cycles_max,stack_bytes\nml-kem-512,keygen,clean,10,x,1,1,1\n",
		"no clean":    "scheme,op,impl,executions,cycles_mean,cycles_min,cycles_max,stack_bytes\nml-kem-512,keygen,m4f,10,1,1,1,1\n",
		"short row":   "scheme,op,impl,executions,cycles_mean,cycles_min,cycles_max,stack_bytes\nml-kem-512,keygen\n",
		"zero cycles": "scheme,op,impl,executions,cycles_mean,cycles_min,cycles_max,stack_bytes\nml-kem-512,keygen,clean,10,0,1,1,1\n",
	} {
		if _, err := parsePQM4([]byte(body)); err == nil {
			t.Errorf("%s: parsePQM4 accepted %q", name, body)
		}
	}
	b, err := os.ReadFile(filepath.Join(repoRoot(t), DefaultPQM4))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := parsePQM4(b)
	if err != nil || len(rows) != 18 {
		t.Fatalf("committed table: %d rows, %v", len(rows), err)
	}
}

func FuzzParsePQM4(f *testing.F) {
	b, err := os.ReadFile(filepath.Join("..", "..", DefaultPQM4))
	if err == nil {
		f.Add(b)
	}
	f.Add([]byte("scheme,op,impl,executions,cycles_mean,cycles_min,cycles_max,stack_bytes\nx,y,clean,1,2,3,4,5\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		rows, err := parsePQM4(b)
		if err != nil {
			return
		}
		for _, r := range rows {
			if r.cycles <= 0 || r.execs <= 0 || r.stack < 0 {
				t.Fatalf("accepted a bad row %+v", r)
			}
		}
	})
}

// TestClassicalComparison adds a synthetic classical image (ECDH with a
// measured exchange, ECDSA, RSA) to the recorded run: the ratios appear.
func TestClassicalComparison(t *testing.T) {
	root := testTree(t)
	writeClassic(t, filepath.Join(root, testRunDir, "classic"))
	if _, err := engine(t, root, Params{}).Build(context.Background(), "pico:analyze", "pico:tables"); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(root, ResultsFile))
	r, err := DecodeResults(ResultsFile, b)
	if err != nil {
		t.Fatal(err)
	}
	x := r.Exchanges["ecdh-p256"]
	if x == nil || x.Method != "measured" || x.Ms != 600 {
		t.Fatalf("ecdh exchange %+v", x)
	}
	v := r.Versus["ml-kem-512"]
	k := r.Exchanges["ml-kem-512"]
	if v == nil || !near(v.Speedup, 600/k.Ms) || !near(v.EnergySaving, 1-k.Ms/600) {
		t.Errorf("versus %+v for ML-KEM-512 exchange %v ms", v, k.Ms)
	}
	if r.NotMeasured["mlkem_vs_ecdh"] != "" || r.SignVerify["ecdsa-p256"] == nil {
		t.Errorf("not measured %v, sign+verify %v", r.NotMeasured, r.SignVerify)
	}
	nums, _ := os.ReadFile(filepath.Join(root, NumbersFile))
	if !bytes.Contains(nums, []byte(`\newcommand{\PicoMlkemFiveTwelveVsEcdhSpeedup}{`)) ||
		bytes.Contains(nums, []byte(`\PicoMlkemFiveTwelveVsEcdhSpeedup}{---}`)) {
		t.Errorf("speed-up macro missing or empty:\n%s", nums)
	}
}

func near(a, b float64) bool { d := a - b; return d < 1e-6*b && d > -1e-6*b }

// writeClassic writes a consistent synthetic classical image: serial log,
// records, size report and host checks.
func writeClassic(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	hdr := mustRead(t, filepath.Join("testdata", "run", "mlkem", "serial.log"))
	first, _, _ := strings.Cut(string(hdr), "\n")
	start, err := picodata.ParseLine(first)
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range start.Fields {
		if f.Key == "schemes" {
			start.Fields[i].Value = "rsa-2048,ecdsa-p256,ecdh-p256"
		}
	}
	var log bytes.Buffer
	var ms []picodata.Measurement
	seq := uint64(0)
	emit := func(kind string, fs ...picodata.Field) {
		log.WriteString(picodata.FormatLine(seq, kind, fs...) + "\n")
		seq++
	}
	emit(picodata.KindStart, start.Fields...)
	add := func(s, op string, i int, us uint64) {
		m := picodata.Measurement{Scheme: s, Op: op, Iter: i, Micros: us, Cycles: us * 133, Stack: 3000, Heap: 4000, OK: true}
		ms = append(ms, m)
		emit(picodata.KindMeasure, picodata.Field{Key: "scheme", Value: s}, picodata.Field{Key: "op", Value: op},
			picodata.Field{Key: "i", Value: itoa(uint64(i))}, picodata.Field{Key: "us", Value: itoa(us)},
			picodata.Field{Key: "cyc", Value: itoa(m.Cycles)}, picodata.Field{Key: "stack", Value: "3000"},
			picodata.Field{Key: "heap", Value: "4000"}, picodata.Field{Key: "ok", Value: "1"})
	}
	for i := 0; i < 3; i++ {
		add("rsa-2048", "sign", i, 3000000)
		add("rsa-2048", "verify", i, 60000)
	}
	for i := 0; i < 3; i++ {
		add("ecdsa-p256", "keygen", i, 150000)
		add("ecdsa-p256", "sign", i, 160000)
		add("ecdsa-p256", "verify", i, 300000)
	}
	for i := 0; i < 3; i++ {
		add("ecdh-p256", "keygen", i, 149000)
		add("ecdh-p256", "shared", i, 151000)
		add("ecdh-p256", "exchange", i, 600000)
	}
	emit(picodata.KindEnd, picodata.Field{Key: "run", Value: "0"}, picodata.Field{Key: "lines", Value: itoa(seq)},
		picodata.Field{Key: "failures", Value: "0"}, picodata.Field{Key: "us", Value: "99999999"})
	mustWrite(t, filepath.Join(dir, "serial.log"), log.Bytes())
	gz, err := picodata.EncodeMeasurements(ms)
	if err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(dir, "measurements.csv.gz"), gz)
	mustWrite(t, filepath.Join(dir, "size.json"), []byte(`{"sections":[],"owners":[{"owner":"ecdh-p256","text":100,"rodata":0,"data":0,"bss":0}],"image_bytes":90000,"static_ram_bytes":60000}`))
	mustWrite(t, filepath.Join(dir, "verify.json"), []byte(`[{"scheme":"ecdh-p256","check":"shared secret","library":"crypto/ecdh","ok":true}]`))
}

func itoa(v uint64) string { return strconv.FormatUint(v, 10) }

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustWrite(t *testing.T, p string, b []byte) {
	t.Helper()
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestM4NoteClock: the Cortex-M4 table's note gives the run's clock,
// whatever it is.
func TestM4NoteClock(t *testing.T) {
	for hz, want := range map[uint32]string{133000000: "133", 125000000: "125", 114857143: "114.857143"} {
		r := &Results{ClockHz: hz, M4: M4Comparison{Source: "s"}}
		if m4, err := m4Table(r); err != nil || !strings.Contains(m4, "SysTick counts at "+want+"\\,MHz") {
			t.Errorf("%d Hz: M4 table (%v):\n%s", hz, err, m4)
		}
	}
}

func TestMacroWord(t *testing.T) {
	for in, want := range map[string]string{
		"ml-kem-512": "MlkemFiveTwelve", "ecdh-p256": "EcdhPTwoFiftySix", "keygen": "Keygen",
		"x25519": "XTwoFiveFiveOneNine", "sign_verify": "SignVerify",
	} {
		if got := macroWord(in); got != want {
			t.Errorf("macroWord(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestStagesDeclareOnlyTheirFiles(t *testing.T) {
	st := Stages(testRunDir+"/", Params{SourceDateEpoch: testEpoch})
	if len(st) != 3 || st[0].Inputs[0] != testRunDir || st[1].Params["SOURCE_DATE_EPOCH"] != "1767225600" {
		t.Fatalf("stages %+v", st[0])
	}
	for _, s := range st {
		for _, o := range s.Outputs {
			if path.IsAbs(o) || strings.Contains(o, "..") {
				t.Errorf("%s: output %s", s.Name, o)
			}
		}
	}
}

func BenchmarkAnalyze(b *testing.B) {
	root := testTree(b)
	e := func() *repro.Engine { return engine(b, root, Params{}) }
	for b.Loop() {
		os.Remove(filepath.Join(root, repro.LockFile))
		if _, err := e().Build(context.Background(), "pico:analyze"); err != nil {
			b.Fatal(err)
		}
	}
}
