package tlsstudy

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"pqrepro/datasets/tlsdata"
	"pqrepro/internal/repro"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// outputs are every file the three stages write.
var outputs = []string{
	ResultsFile,
	FigureThs + ".pdf", FigureThs + ".svg", FigureBytes + ".pdf", FigureBytes + ".svg", FigureGap + ".pdf", FigureGap + ".svg",
	FigureDrift + ".pdf", FigureDrift + ".svg",
	TablePaper, TableMatrix, TableBytes, TableGap, TableFactors, TableDrift, TableSerial, NumbersFile,
}

// goldens are the outputs compared with testdata/ (the figures are checked
// for determinism instead: their bytes follow gonum/plot's drawing code).
var goldens = []string{ResultsFile, TablePaper, TableMatrix, TableBytes, TableGap, TableFactors, TableDrift, TableSerial, NumbersFile}

func codeRoot(t testing.TB) string {
	t.Helper()
	r, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func engine(t testing.TB, root string, p Params) *repro.Engine {
	return &repro.Engine{
		Root:     root,
		CodeRoot: codeRoot(t),
		Stages:   Stages(testRunDir, p),
		RawDirs:  []string{"data"},
	}
}

func build(t testing.TB, root string, p Params) (*repro.BuildReport, error) {
	t.Helper()
	return engine(t, root, p).Build(context.Background())
}

func readOutputs(t testing.TB, root string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, o := range outputs {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(o)))
		if err != nil {
			t.Fatalf("output %s: %v", o, err)
		}
		out[o] = b
	}
	return out
}

func testParams() Params {
	p := DefaultParams("quick")
	p.BootstrapResamples = 1000
	return p
}

// TestStagesGoldenAndDeterministic runs the three stages through a real
// engine on the synthetic matrix twice, in two trees, and compares the
// outputs with each other (every byte, PDFs included) and with the golden
// files.
func TestStagesGoldenAndDeterministic(t *testing.T) {
	recs := matrixSpec.records()
	rootA, rootB := writeTree(t, recs), writeTree(t, recs)
	rep, err := build(t, rootA, testParams())
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"tls:analyze", "tls:figures", "tls:tables"}; !slices.Equal(rep.Ran, want) {
		t.Fatalf("ran %v, want %v", rep.Ran, want)
	}
	if _, err := build(t, rootB, testParams()); err != nil {
		t.Fatal(err)
	}
	a, b := readOutputs(t, rootA), readOutputs(t, rootB)
	for _, o := range outputs {
		if !bytes.Equal(a[o], b[o]) {
			t.Errorf("%s differs between two builds of the same data", o)
		}
	}
	for _, o := range []string{FigureThs + ".pdf", FigureBytes + ".pdf"} {
		if !bytes.HasPrefix(a[o], []byte("%PDF-")) || !bytes.Contains(a[o], []byte("D:20260101000000")) {
			t.Errorf("%s is not a PDF dated SOURCE_DATE_EPOCH (2026-01-01)", o)
		}
	}
	// repro's verification re-derives every output from the raw data in
	// a temporary tree and finds the same bytes.
	vr, err := engine(t, rootA, testParams()).Verify(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(vr.Problems) != 0 || vr.Rederived != len(outputs) {
		t.Errorf("verify: %d re-derived, problems %v", vr.Rederived, vr.Problems)
	}
	// A second build in the same tree does nothing, unless the code of
	// the stages changed meanwhile (the code version covers every
	// imported package of the live checkout, which other work may edit).
	st, err := engine(t, rootA, testParams()).Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	codeChanged := false
	for _, s := range st {
		for _, why := range s.Reasons {
			switch {
			case strings.HasPrefix(why, "code changed"):
				codeChanged = true
			case strings.HasPrefix(why, "upstream stage"):
			default:
				t.Errorf("stage %s stale after a build: %s", s.Name, why)
			}
		}
	}
	rep, err = build(t, rootA, testParams())
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Ran) != 0 && !codeChanged {
		t.Errorf("second build ran %v, want nothing", rep.Ran)
	}
	// A changed parameter reruns the analysis and everything after it.
	p := testParams()
	p.BootstrapSeed++
	if rep, err = build(t, rootA, p); err != nil || len(rep.Ran) != 3 {
		t.Errorf("after a new seed: ran %v, err %v; want all three stages", rep.Ran, err)
	}
	if dir := os.Getenv("TLSMATRIX_FIGURES"); dir != "" { // for looking at them
		for _, o := range outputs {
			if strings.HasPrefix(o, "figures/") {
				_ = os.WriteFile(filepath.Join(dir, filepath.Base(o)), a[o], 0o644)
			}
		}
	}
	for _, o := range goldens {
		golden(t, filepath.Base(o), a[o])
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from testdata/%s (run go test -update after checking why)", name, name)
	}
}

// TestBadInput: every bad dataset fails tls:analyze with a message naming
// the problem, and no output is written.
func TestBadInput(t *testing.T) {
	base := paperSpec.records()
	measuredOf := func(rs []tlsdata.Record, config string) *tlsdata.Record {
		for i := range rs {
			if rs[i].Config == config && !rs[i].Warmup {
				return &rs[i]
			}
		}
		t.Fatalf("no measured %s", config)
		return nil
	}
	cases := []struct {
		name   string
		mutate func([]tlsdata.Record) []tlsdata.Record
		raw    []byte // instead of records
		want   []string
	}{
		{name: "incomplete connection", mutate: func(rs []tlsdata.Record) []tlsdata.Record {
			r := measuredOf(rs, "mldsa87/X25519")
			r.ClientFinishedNs, r.ThsNs, r.Complete = nil, nil, false
			return rs
		}, want: []string{"config mldsa87/X25519 seq ", "incomplete handshake", "not valid samples"}},
		{name: "wrong negotiated group", mutate: func(rs []tlsdata.Record) []tlsdata.Record {
			measuredOf(rs, "ed25519/MLKEM1024").NegotiatedGroup = "X25519MLKEM768"
			return rs
		}, want: []string{"config ed25519/MLKEM1024 seq ", "negotiated group X25519MLKEM768, configured MLKEM1024"}},
		{name: "unexpected HRR", mutate: func(rs []tlsdata.Record) []tlsdata.Record {
			measuredOf(rs, "ed25519/SecP384r1MLKEM1024").HRR = true
			return rs
		}, want: []string{"config ed25519/SecP384r1MLKEM1024 seq ", "unexpected HelloRetryRequest"}},
		{name: "missing config", mutate: func(rs []tlsdata.Record) []tlsdata.Record {
			return slices.DeleteFunc(rs, func(r tlsdata.Record) bool { return r.Config == "ed25519/MLKEM1024" })
		}, want: []string{"the paper's pq-kem configuration ed25519/MLKEM1024 has no measured connections"}},
		{name: "config with only warm-ups", mutate: func(rs []tlsdata.Record) []tlsdata.Record {
			return slices.DeleteFunc(rs, func(r tlsdata.Record) bool { return r.Config == "ed25519/X25519" && !r.Warmup })
		}, want: []string{"baseline configuration ed25519/X25519 has no measured connections"}},
		{name: "config with n=1", mutate: func(rs []tlsdata.Record) []tlsdata.Record {
			keep := measuredOf(rs, "mldsa87/X25519").Seq
			return slices.DeleteFunc(rs, func(r tlsdata.Record) bool {
				return r.Config == "mldsa87/X25519" && !r.Warmup && r.Seq != keep
			})
		}, want: []string{"config mldsa87/X25519 has 1 measured connection(s), at least 2 are needed"}},
		{name: "only warm-ups", mutate: func(rs []tlsdata.Record) []tlsdata.Record {
			return slices.DeleteFunc(rs, func(r tlsdata.Record) bool { return !r.Warmup })
		}, want: []string{"no measured connections"}},
		{name: "empty file", raw: []byte{}, want: []string{"records.csv.gz: empty file", "record a new run"}},
		{name: "header only", raw: []byte(strings.Join(tlsdata.Columns, ",") + "\n"), want: []string{"records.csv.gz: no records"}},
		{name: "garbage", raw: []byte("\x1f\x8b\x08garbage"), want: []string{"records.csv.gz: gzip"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var root string
			if c.raw != nil {
				root = writeTree(t, base[:1])
				p := filepath.Join(root, filepath.FromSlash(testRunDir), tlsdata.RecordsFile)
				os.Chmod(p, 0o644)
				if err := os.WriteFile(p, c.raw, 0o644); err != nil {
					t.Fatal(err)
				}
			} else {
				root = writeTree(t, c.mutate(slices.Clone(base)))
			}
			_, err := build(t, root, testParams())
			if err == nil {
				t.Fatal("build succeeded")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\nwant it to contain %q", err, w)
				}
			}
			assertNoOutputs(t, root)
		})
	}
}

func assertNoOutputs(t *testing.T, root string) {
	t.Helper()
	for _, o := range outputs {
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(o))); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s exists after a failed build (%v)", o, err)
		}
	}
}

// A configuration that expects a HelloRetryRequest accepts connections
// that had one and refuses connections that had none.
func TestExpectedHRR(t *testing.T) {
	spec := paperSpec
	spec.extra = append(slices.Clone(spec.extra), "ed25519/MLKEM1024/hrr")
	recs := spec.records()
	root := writeTree(t, recs)
	if _, err := build(t, root, testParams()); err != nil {
		t.Fatalf("HRR configuration refused: %v", err)
	}
	for i := range recs {
		if recs[i].Config == "ed25519/MLKEM1024/hrr" && !recs[i].Warmup {
			recs[i].HRR = false
			break
		}
	}
	root = writeTree(t, recs)
	_, err := build(t, root, testParams())
	if err == nil || !strings.Contains(err.Error(), "no HelloRetryRequest although the configuration expects one") {
		t.Fatalf("missing HRR: %v", err)
	}
}

func TestBadParamsAndEpoch(t *testing.T) {
	root := writeTree(t, paperSpec.records())
	p := testParams()
	p.Paper = p.Paper[:3]
	if _, err := build(t, root, p); err == nil || !strings.Contains(err.Error(), "paper lists 3 configurations, want 4") {
		t.Errorf("three paper configs: %v", err)
	}
	p = testParams()
	p.Baseline = "ed25519/X448"
	if _, err := build(t, root, p); err == nil || !strings.Contains(err.Error(), `unknown group "X448"`) {
		t.Errorf("bad baseline: %v", err)
	}
	assertNoOutputs(t, root)

	// Params.SourceDateEpoch (the setting) dates the figures.
	p = testParams()
	p.SourceDateEpoch = time.Unix(1700000000, 0)
	if _, err := build(t, root, p); err != nil {
		t.Fatal(err)
	}
	for _, o := range []string{FigureThs + ".pdf", FigureBytes + ".pdf"} {
		if b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(o))); err != nil || !bytes.Contains(b, []byte("D:20231114221320")) {
			t.Errorf("%s is not dated Params.SourceDateEpoch (2023-11-14T22:13:20Z): %v", o, err)
		}
	}
}

// An interrupted build writes nothing.
func TestCancelled(t *testing.T) {
	root := writeTree(t, paperSpec.records())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := engine(t, root, testParams()).Build(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled build: %v", err)
	}
	assertNoOutputs(t, root)
}
