package picostudy

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"pqrepro/datasets/picodata"
)

// setBoard writes board into an image folder's image.json.
func setBoard(t *testing.T, dir, board string) {
	t.Helper()
	p := filepath.Join(dir, picodata.ImageFile)
	var rec map[string]any
	if err := json.Unmarshal(mustRead(t, p), &rec); err != nil {
		t.Fatal(err)
	}
	rec["board"] = board
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	mustWrite(t, p, b)
}

// replicate turns the recorded run into a replicated one: every image
// folder <image> becomes <image>@1 .. <image>@n, run on boards ids[i].
func replicate(t *testing.T, runDir string, ids ...string) {
	t.Helper()
	es, err := os.ReadDir(runDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		if !e.IsDir() {
			continue
		}
		src := filepath.Join(runDir, e.Name())
		for i, id := range ids {
			dst := filepath.Join(runDir, e.Name()+"@"+strconv.Itoa(i+1))
			copyTree(t, src, dst)
			setBoard(t, dst, id)
		}
		if err := os.RemoveAll(src); err != nil {
			t.Fatal(err)
		}
	}
}

// slower makes one operation of a scheme 10% slower plus a per-iteration
// offset in an image folder (serial log and records alike).
func slower(t *testing.T, dir, scheme, op string) {
	t.Helper()
	rewriteLog(t, filepath.Join(dir, picodata.SerialLogFile), func(l picodata.Line) []picodata.Line {
		if l.Kind != picodata.KindMeasure {
			return []picodata.Line{l}
		}
		if s, _ := l.Get("scheme"); s != scheme {
			return []picodata.Line{l}
		}
		if o, _ := l.Get("op"); o != op {
			return []picodata.Line{l}
		}
		us, _ := l.Uint("us")
		i, _ := l.Uint("i")
		for k, f := range l.Fields {
			if f.Key == "us" {
				l.Fields[k].Value = strconv.FormatUint(us*11/10+i, 10)
			}
		}
		return []picodata.Line{l}
	})
	rewriteRecords(t, dir)
}

// rewriteRecords writes an image folder's records again from its serial
// log, after a test changed the log.
func rewriteRecords(t *testing.T, dir string) {
	t.Helper()
	ds, err := picodata.ReadRun(context.Background(), bytes.NewReader(mustRead(t, filepath.Join(dir, picodata.SerialLogFile))), picodata.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	gz, err := picodata.EncodeMeasurements(ds.Measurements)
	if err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(dir, picodata.MeasurementsFile), gz)
}

func analyzeTree(t *testing.T, root string) *Results {
	t.Helper()
	if _, err := engine(t, root, Params{}).Build(context.Background()); err != nil {
		t.Fatal(err)
	}
	r, err := DecodeResults(ResultsFile, mustRead(t, filepath.Join(root, ResultsFile)))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestBoardFactorIdentical: the deterministic emulator replicated on two
// instances gives the same times, and the test says so: H = 0, p = 1 for
// every operation, and the paper's operations table gains the
// between-board table.
func TestBoardFactorIdentical(t *testing.T) {
	root := testTree(t)
	replicate(t, filepath.Join(root, testRunDir), "rp2040js-1", "rp2040js-2")
	r := analyzeTree(t, root)
	f := r.Boards
	if f == nil || len(f.Boards) != 2 || len(f.Boards["rp2040js-2"]) != 6 || f.Note != "" {
		t.Fatalf("boards %+v", f)
	}
	if len(f.Ops) < 20 {
		t.Fatalf("%d operations compared, want every operation of the 10 schemes", len(f.Ops))
	}
	for _, o := range f.Ops {
		if !o.Identical || o.H != 0 || o.P != 1 || o.PHolm != 1 || o.Epsilon2 != 0 || len(o.Boards) != 2 || o.N[0] != o.N[1] {
			t.Errorf("%s %s: %+v, want identical with H = 0 and p = 1", o.Scheme, o.Op, o)
		}
	}
	// Pooled: twice the single run's repetitions.
	if n := r.Schemes["ml-kem-512"].Ops["keygen"].N; n != 10 {
		t.Errorf("ml-kem-512 keygen n = %d, want 10 (5 per board)", n)
	}
	tab := string(mustRead(t, filepath.Join(root, TableOps)))
	if !strings.Contains(tab, "tab:pico-boards") || !strings.Contains(tab, "identical") || !strings.Contains(tab, "rp2040js-1, rp2040js-2") {
		t.Errorf("operations table lacks the between-board table:\n%s", tab)
	}
}

// TestBoardFactorDifference: one board 10% slower in one operation is
// found (small p, large effect), the others are not, and Holm's
// adjustment multiplies the smallest p by the number of operations (with
// 5 repetitions per board, 0.0076 becomes about 0.2 over 26 operations:
// the quick profile cannot resolve a board difference after adjustment).
func TestBoardFactorDifference(t *testing.T) {
	root := testTree(t)
	run := filepath.Join(root, testRunDir)
	replicate(t, run, "E6614103E73F2C2A", "E661410403593B2B", "E6614864D3417C28")
	slower(t, filepath.Join(run, "mlkem@3"), "ml-kem-768", "decaps")
	r := analyzeTree(t, root)
	for _, o := range r.Boards.Ops {
		diff := o.Scheme == "ml-kem-768" && o.Op == "decaps"
		if diff && (o.Identical || o.P > 0.01 || o.Epsilon2 < 0.5 || o.DF != 2 || !near(o.PHolm, o.P*float64(len(r.Boards.Ops)))) {
			t.Errorf("the slow board is not found: %+v (%d operations)", o, len(r.Boards.Ops))
		}
		if !diff && !o.Identical {
			t.Errorf("%s %s differs between boards: %+v", o.Scheme, o.Op, o)
		}
	}
}

// TestBoardFactorSpread: images spread over two boards (each once) give
// the board list and a note, no test, and the single-board tables.
func TestBoardFactorSpread(t *testing.T) {
	root := testTree(t)
	run := filepath.Join(root, testRunDir)
	for i, img := range []string{"classic", "mldsa44", "mldsa65", "mldsa87", "mlkem"} {
		setBoard(t, filepath.Join(run, img), "rp2040js-"+strconv.Itoa(i%2+1))
	}
	r := analyzeTree(t, root)
	if r.Boards == nil || len(r.Boards.Ops) != 0 || !strings.Contains(r.Boards.Note, "replicate = true") ||
		strings.Join(r.Boards.Boards["rp2040js-2"], ",") != "mldsa44,mldsa87" {
		t.Fatalf("boards %+v", r.Boards)
	}
	if strings.Contains(string(mustRead(t, filepath.Join(root, TableOps))), "tab:pico-boards") {
		t.Error("a spread run has no between-board table")
	}
}

// TestBoardFactorBadInput: the same image twice on one board, or two
// builds of one image, is an error.
func TestBoardFactorBadInput(t *testing.T) {
	err := badRun(t, func(run string) { replicate(t, run, "pico-1", "pico-1") })
	if !strings.Contains(err.Error(), "ran twice on board pico-1") {
		t.Errorf("error %v", err)
	}
	err = badRun(t, func(run string) {
		replicate(t, run, "a", "b")
		rewriteLog(t, filepath.Join(run, "mlkem@2", picodata.SerialLogFile), func(l picodata.Line) []picodata.Line {
			for k, f := range l.Fields {
				if f.Key == "fw" {
					l.Fields[k].Value = "0000000000000000"
				}
			}
			return []picodata.Line{l}
		})
	})
	if !strings.Contains(err.Error(), "one run must run one build of each image") {
		t.Errorf("error %v", err)
	}
}
