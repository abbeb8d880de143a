package picostudy

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"pqrepro/datasets/picodata"
)

// setImage sets keys of an image folder's image.json (a nil value
// deletes the key; "provenance.<k>" sets a key of its provenance map).
func setImage(t *testing.T, dir string, kv map[string]any) {
	t.Helper()
	p := filepath.Join(dir, picodata.ImageFile)
	var rec map[string]any
	if err := json.Unmarshal(mustRead(t, p), &rec); err != nil {
		t.Fatal(err)
	}
	for k, v := range kv {
		if pk, ok := strings.CutPrefix(k, "provenance."); ok {
			rec["provenance"].(map[string]any)[pk] = v
			continue
		}
		if v == nil {
			delete(rec, k)
		} else {
			rec[k] = v
		}
	}
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	mustWrite(t, p, b)
}

// retime rewrites an image folder's serial log (and its records to
// match): the firmware's clock becomes clockHz and every measurement's
// cycles cyc(scheme, op, cycles).
func retime(t *testing.T, dir string, clockHz uint64, cyc func(scheme, op string, c uint64) uint64) {
	t.Helper()
	rewriteLog(t, filepath.Join(dir, picodata.SerialLogFile), func(l picodata.Line) []picodata.Line {
		for k, f := range l.Fields {
			switch {
			case l.Kind == picodata.KindStart && f.Key == "clk":
				l.Fields[k].Value = strconv.FormatUint(clockHz, 10)
			case l.Kind == picodata.KindMeasure && f.Key == "cyc":
				s, _ := l.Get("scheme")
				op, _ := l.Get("op")
				c, _ := strconv.ParseUint(f.Value, 10, 64)
				l.Fields[k].Value = strconv.FormatUint(cyc(s, op, c), 10)
			}
		}
		return []picodata.Line{l}
	})
	rewriteRecords(t, dir)
}

// addConfiguration runs every image of the recorded run again as
// <image>+<name>, as the runner writes a profile's configuration: the
// firmware at clockHz with the runtime, each measurement's cycles
// cyc(scheme, op, cycles).
func addConfiguration(t *testing.T, runDir, name string, clockHz uint64, runtime string, cyc func(scheme, op string, c uint64) uint64) {
	t.Helper()
	es, err := os.ReadDir(runDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		if !e.IsDir() || strings.Contains(e.Name(), configSep) {
			continue
		}
		dst := filepath.Join(runDir, e.Name()+configSep+name)
		copyTree(t, filepath.Join(runDir, e.Name()), dst)
		retime(t, dst, clockHz, cyc)
		setImage(t, dst, map[string]any{"name": e.Name() + configSep + name, "configuration": name, "runtime": runtime,
			"clock_mhz": float64(clockHz) / 1e6, "message_bytes": 32, "provenance.runtime": runtime})
	}
}

// sdkCycles is the synthetic sdk configuration's effect on cycles:
// ML-DSA-44 signing takes 7/10 of its cycles, everything else the same.
func sdkCycles(s, op string, c uint64) uint64 {
	if s == "ml-dsa-44" && op == "sign" {
		return c * 7 / 10
	}
	return c
}

func relNear(a, b, tol float64) bool { return math.Abs(a-b) <= tol*math.Abs(b) }

// TestConfigurationsTwoClocks: a run with the primary at 133 MHz and a
// configuration "sdk" at 125 MHz with SDK-like run-time routines. The
// primary's results are those of the run without it; the configuration's
// times are its cycles at its own clock; the factor view gives the cycle
// and time ratios and names the factors; the table shows them.
func TestConfigurationsTwoClocks(t *testing.T) {
	plain := analyzeTree(t, testTree(t))

	root := testTree(t)
	addConfiguration(t, filepath.Join(root, testRunDir), "sdk", 125000000, "sdk-like", sdkCycles)
	r := analyzeTree(t, root)

	c := r.Configurations
	if c == nil || len(c.Others) != 1 {
		t.Fatalf("configurations %+v", c)
	}
	// The primary is untouched: the same results, byte for byte, without
	// the configurations.
	r.Configurations = nil
	a, _ := r.Marshal()
	b, _ := plain.Marshal()
	if !bytes.Equal(a, b) {
		t.Error("the primary's results changed when a configuration ran beside it")
	}
	want := Factors{Name: "", ClockHz: 133000000, Runtime: "libgcc", MessageBytes: 32, CodeIn: "ram"}
	if c.Primary != want {
		t.Errorf("primary %+v, want %+v", c.Primary, want)
	}
	o := c.Others[0]
	if want.Name, want.ClockHz, want.Runtime = "sdk", 125000000, "sdk-like"; o.Factors != want {
		t.Errorf("sdk %+v, want %+v", o.Factors, want)
	}
	if len(o.Differs) != 2 || o.Differs[0] != (FactorChange{"clock_mhz", "133", "125"}) || o.Differs[1] != (FactorChange{"runtime", "libgcc", "sdk-like"}) {
		t.Errorf("differs %+v", o.Differs)
	}
	if len(o.Folders) != 6 || o.Folders[0] != "classic+sdk" {
		t.Errorf("folders %v", o.Folders)
	}
	// Each time is its cycles at the configuration's own clock.
	for s, sc := range o.Schemes {
		if sc.Image != r.Schemes[s].Image {
			t.Errorf("%s: image %q, primary's %q", s, sc.Image, r.Schemes[s].Image)
		}
		for op, x := range sc.Ops {
			if !relNear(*x.MeanMs, *x.MeanCycles/125e6*1000, 1e-9) {
				t.Errorf("%s %s: mean %v ms for %v cycles at 125 MHz", s, op, *x.MeanMs, *x.MeanCycles)
			}
		}
	}
	sign := o.Schemes["ml-dsa-44"].Ops["sign"]
	if len(sign.SamplesMs) != sign.N || sign.MinCycles == nil || *sign.MinCycles != *r.Schemes["ml-dsa-44"].Ops["sign"].MinCycles*7/10 {
		t.Errorf("ml-dsa-44 sign %+v", sign)
	}
	// What the factors moved: the clock alone moves every time by 133/125;
	// ML-DSA-44 signing's cycles by 7/10.
	ops := 0
	for _, sc := range r.Schemes {
		ops += len(sc.Ops)
	}
	if len(o.Moved) != ops {
		t.Errorf("%d operations moved, the primary has %d", len(o.Moved), ops)
	}
	for _, m := range o.Moved {
		cr := 1.0
		if m.Scheme == "ml-dsa-44" && m.Op == "sign" {
			cr = 0.7
		}
		p := r.Schemes[m.Scheme].Ops[m.Op]
		if m.PrimaryCycles != *p.MeanCycles || !relNear(m.CyclesRatio, cr, 1e-6) || m.ClockRatio != 1.064 ||
			!relNear(m.TimeRatio, cr*133/125, 1e-6) || !relNear(m.PrimaryMs, *p.MeanCycles/133e3, 1e-9) ||
			!relNear(m.Ms, m.Cycles/125e3, 1e-9) {
			t.Errorf("moved %+v", m)
		}
	}

	tab := string(mustRead(t, filepath.Join(root, TableConfigurations)))
	for _, w := range []string{`\label{tab:pico-configurations}`, "sdk: cycles & sdk: time",
		"sdk: clock (MHz) 133 $\\to$ 125, run-time routines libgcc $\\to$ sdk-like (the clock alone: time $\\times$ 1.064)",
		"Primary ([build]'s", "ML-DSA-44 & keygen & 5{,}247{,}780 & 39.46 & 1.000 & 1.064", "& sign & 19{,}667{,}424 & 147.9 & 0.700 & 0.745"} {
		if !strings.Contains(tab, w) {
			t.Errorf("the table lacks %q:\n%s", w, tab)
		}
	}
	if strings.Contains(tab, "not measured") || strings.Contains(tab, "---") || strings.Count(tab, `\\`)-1 != ops {
		t.Errorf("the table should have one row per operation and measure:\n%s", tab)
	}
	// The other tables are the primary's: the M4 note's clock is the run's.
	if m4 := string(mustRead(t, filepath.Join(root, TableM4))); !strings.Contains(m4, "SysTick counts at 133\\,MHz") {
		t.Errorf("M4 note:\n%s", m4)
	}
}

// TestConfigurationsOneFactorEach: three configurations, each unlike the
// primary in its own factors, are columns of one table; the clock alone
// moves no cycle count, the run-time routines alone no clock.
func TestConfigurationsOneFactorEach(t *testing.T) {
	root := testTree(t)
	dir := filepath.Join(root, testRunDir)
	same := func(_, _ string, c uint64) uint64 { return c }
	addConfiguration(t, dir, "sdk", 125000000, "sdk-like", sdkCycles)
	addConfiguration(t, dir, "rt", 133000000, "sdk-like", sdkCycles)
	addConfiguration(t, dir, "clk", 125000000, "libgcc", same)
	r := analyzeTree(t, root)
	c := r.Configurations
	if c == nil || len(c.Others) != 3 {
		t.Fatalf("configurations %+v", c)
	}
	var names []string
	for _, o := range c.Others {
		names = append(names, o.Factors.Name)
		var fs []string
		for _, d := range o.Differs {
			fs = append(fs, d.Factor)
		}
		want := map[string]string{"clk": "clock_mhz", "rt": "runtime", "sdk": "clock_mhz,runtime"}[o.Factors.Name]
		if strings.Join(fs, ",") != want {
			t.Errorf("%s differs in %v, want %s", o.Factors.Name, fs, want)
		}
		for _, m := range o.Moved {
			sign := m.Scheme == "ml-dsa-44" && m.Op == "sign"
			cr, clk := 1.0, 1.0
			if sign && o.Factors.Runtime == "sdk-like" {
				cr = 0.7
			}
			if o.Factors.ClockHz == 125000000 {
				clk = 1.064
			}
			if !relNear(m.CyclesRatio, cr, 1e-6) || m.ClockRatio != clk || !relNear(m.TimeRatio, cr*clk, 1e-6) {
				t.Errorf("%s: %+v", o.Factors.Name, m)
			}
		}
	}
	if strings.Join(names, ",") != "clk,rt,sdk" {
		t.Errorf("configurations %v, want by name", names)
	}
	tab := string(mustRead(t, filepath.Join(root, TableConfigurations)))
	for _, w := range []string{"clk: cycles & clk: time & rt & sdk: cycles & sdk: time",
		"& sign & 19{,}667{,}424 & 147.9 & 1.000 & 1.064 & 0.700 & 0.700 & 0.745",
		"clk: clock (MHz) 133 $\\to$ 125 (the clock alone: time $\\times$ 1.064); rt: run-time routines libgcc $\\to$ sdk-like; sdk:"} {
		if !strings.Contains(tab, w) {
			t.Errorf("the table lacks %q:\n%s", w, tab)
		}
	}
}

// TestOneConfigurationTable: the run with one configuration says the
// table was not measured, and its clock is the run's.
func TestOneConfigurationTable(t *testing.T) {
	r := &Results{ClockHz: 125000000, Board: "b", Compiler: "c", Run: "r"}
	tab, err := configurationsTable(r)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(tab, "not measured in this run") || !strings.Contains(tab, "the primary at 125\\,MHz") {
		t.Errorf("table:\n%s", tab)
	}
}

// TestConfigurationErrors: images of one configuration at two clocks,
// and factor values the analysis cannot name, are clear errors before
// any output is written.
func TestConfigurationErrors(t *testing.T) {
	same := func(_, _ string, c uint64) uint64 { return c }
	withSDK := func(t *testing.T, dir string) { addConfiguration(t, dir, "sdk", 125000000, "sdk-like", same) }
	cases := []badCase{
		{"primary at two clocks", func(t *testing.T, dir string) {
			retime(t, filepath.Join(dir, "mlkem"), 125000000, same)
			setImage(t, filepath.Join(dir, "mlkem"), map[string]any{"clock_mhz": 125})
		}, "configuration primary: image classic ran at 133000000 Hz (runtime libgcc, 32-byte messages, code in ram), image mlkem at 125000000 Hz"},
		{"configuration at two clocks", func(t *testing.T, dir string) {
			withSDK(t, dir)
			retime(t, filepath.Join(dir, "mlkem+sdk"), 120000000, same)
			setImage(t, filepath.Join(dir, "mlkem+sdk"), map[string]any{"clock_mhz": 120})
		}, "configuration sdk: image classic+sdk ran at 125000000 Hz"},
		{"unknown runtime", func(t *testing.T, dir string) {
			withSDK(t, dir)
			setImage(t, filepath.Join(dir, "mldsa44+sdk"), map[string]any{"runtime": "newlib-fast"})
		}, `mldsa44+sdk/image.json: runtime "newlib-fast" is not one of libgcc, sdk-like`},
		{"unknown code_in", func(t *testing.T, dir string) {
			setImage(t, filepath.Join(dir, "mlkem"), map[string]any{"provenance.code_in": "sram"})
		}, `mlkem/image.json: code_in "sram" is not one of ram, flash, flash-cold`},
		{"message length out of range", func(t *testing.T, dir string) {
			setImage(t, filepath.Join(dir, "mlkem"), map[string]any{"message_bytes": 5000})
		}, "message_bytes 5000 is not in 1..4096"},
		{"clock_mhz unlike the firmware's", func(t *testing.T, dir string) {
			setImage(t, filepath.Join(dir, "mlkem"), map[string]any{"clock_mhz": 125})
		}, "mlkem/image.json: clock_mhz 125, but the firmware reported clock_hz 133000000"},
		{"configuration unlike its folder", func(t *testing.T, dir string) {
			withSDK(t, dir)
			setImage(t, filepath.Join(dir, "mlkem+sdk"), map[string]any{"configuration": "fast"})
		}, `mlkem+sdk/image.json: configuration "fast", but its folder mlkem+sdk names "sdk"`},
		{"bad configuration name", func(t *testing.T, dir string) {
			addConfiguration(t, dir, "SDK", 125000000, "sdk-like", same)
		}, `configuration "SDK" is not a configuration name`},
		{"configuration without image.json", func(t *testing.T, dir string) {
			withSDK(t, dir)
			if err := os.Remove(filepath.Join(dir, "mlkem+sdk", picodata.ImageFile)); err != nil {
				t.Fatal(err)
			}
		}, "image mlkem+sdk: data/pico/" + testRunID + "/mlkem+sdk/image.json is missing"},
		{"configuration with the primary's factors", func(t *testing.T, dir string) {
			addConfiguration(t, dir, "again", 133000000, "libgcc", same)
		}, "configuration again has the primary's factors"},
		{"no primary", func(t *testing.T, dir string) {
			withSDK(t, dir)
			for _, im := range []string{"classic", "mlkem", "mldsa44", "mldsa65", "mldsa87", "sphincs-sha2-128f"} {
				if err := os.RemoveAll(filepath.Join(dir, im)); err != nil {
					t.Fatal(err)
				}
			}
		}, "the run has no image of the primary configuration"},
	}
	runBadCases(t, cases)
}

// TestConfigurationSubset: a configuration that ran some images only (its
// images key) is summarised on those; the factor table dashes the rest,
// and the comparison with the original gets the SDK build's columns, with
// a dash where the configuration lacks the scheme.
func TestConfigurationSubset(t *testing.T) {
	root := testTree(t)
	dir := filepath.Join(root, testRunDir)
	addConfiguration(t, dir, SDKConfiguration, 125000000, "sdk-like", sdkCycles)
	addConfiguration(t, dir, "rt", 133000000, "sdk-like", sdkCycles)
	for _, img := range []string{"mldsa65+sdk", "classic+sdk", "mlkem+rt", "mldsa65+rt", "mldsa87+rt", "classic+rt"} {
		if err := os.RemoveAll(filepath.Join(dir, img)); err != nil {
			t.Fatal(err)
		}
	}
	r := analyzeTree(t, root)
	sdk := r.sdkConfiguration()
	if sdk == nil || sdk.Schemes["ml-dsa-65"] != nil || sdk.Schemes["ml-dsa-44"] == nil || len(sdk.Published) != len(r.Published) {
		t.Fatalf("sdk configuration %+v", sdk)
	}
	for i, v := range sdk.Published {
		p := r.Published[i]
		// ECDH is not in the sdk configuration, nor ML-DSA-65 (for the CV
		// range of the three sets).
		missing := strings.Contains(p.Quantity, "ECDH") || strings.Contains(p.Key, "cv")
		if v.Key != p.Key || (v.Ours == nil) != (missing || p.Ours == nil) {
			t.Errorf("%s: sdk %v, primary %v", p.Key, v.Ours, p.Ours)
		}
	}
	tab := string(mustRead(t, filepath.Join(root, TableConfigurations)))
	for _, w := range []string{"rt & sdk: cycles & sdk: time", "ML-KEM-512 & keygen & 1{,}192{,}336 & 8.965 & --- & 1.000 & 1.064", "--- : the configuration did not run the operation"} {
		if !strings.Contains(tab, w) {
			t.Errorf("the factor table lacks %q:\n%s", w, tab)
		}
	}
	if strings.Contains(tab, "ML-DSA-65") {
		t.Errorf("the factor table has a row no configuration ran:\n%s", tab)
	}
	vs := string(mustRead(t, filepath.Join(root, TableVersusPaper)))
	for _, w := range []string{"& SDK build & SDK / paper", "SDK build: the configuration sdk (clock mhz 125, runtime sdk-like)",
		"--- : not measured in this run"} {
		if !strings.Contains(vs, w) {
			t.Errorf("the comparison lacks %q:\n%s", w, vs)
		}
	}
}
