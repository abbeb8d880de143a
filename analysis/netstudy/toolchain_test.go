package netstudy

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"testing"

	"pqrepro/datasets/netdata"
)

// twoToolchains is the synthetic design run by two toolchains: the
// primary's hybrid costs 0.35 ms of CPU more than X25519, the other's
// 0.15 ms, so every difference changes by about -0.2 ms.
func twoToolchains(t *testing.T) (Design, []Row) {
	t.Helper()
	d := synthDesign()
	d.Toolchains = []string{"go1.24.4", "go1.27.3"}
	var cells [][]string
	for i, tc := range d.Toolchains {
		for _, r := range synthRowsWith(d, 42+uint64(i), []float64{0.35, 0.15}[i]) {
			cells = append(cells, append(r, tc))
		}
	}
	return d, readRows(t, netdata.Columns, cells)
}

func TestToolchainChanges(t *testing.T) {
	d, rows := twoToolchains(t)
	res, err := Analyze(&d, rows, Params{}, "data/net/x", "x", "synth")
	if err != nil {
		t.Fatal(err)
	}
	tc := res.Toolchains
	if tc.Primary != "go1.24.4" || !slices.Equal(tc.Levels, d.Toolchains) || tc.Note != "" || len(tc.PerToolchain) != 2 {
		t.Fatalf("toolchains %+v", tc)
	}
	// The primary's comparisons are the study's.
	for i, c := range tc.PerToolchain[0].Comparisons {
		if c.DiffMs != res.Comparisons[i].DiffMs || c.MWUPAdj != res.Comparisons[i].MWUPAdj {
			t.Errorf("comparison %d: %+v differs from the study's %+v", i, c, res.Comparisons[i])
		}
	}
	if n := len(tc.Changes); n != len(d.Scenarios)*len(d.Rounds) {
		t.Fatalf("%d changes, want %d", n, len(d.Scenarios)*len(d.Rounds))
	}
	for _, ch := range tc.Changes {
		if ch.From != "go1.24.4" || ch.To != "go1.27.3" {
			t.Errorf("change %s -> %s", ch.From, ch.To)
		}
		if math.Abs(float64(ch.ChangeMs)+0.2) > 0.15 {
			t.Errorf("%s round %d: change %.3f ms, want about -0.2", ch.Scenario, ch.Round, ch.ChangeMs)
		}
		if !(ch.Lower <= ch.ChangeMs && ch.ChangeMs <= ch.Upper) || ch.PHolm < ch.P {
			t.Errorf("%s round %d: change %v [%v, %v], p %v, Holm %v", ch.Scenario, ch.Round, ch.ChangeMs, ch.Lower, ch.Upper, ch.P, ch.PHolm)
		}
		if math.Abs(float64(ch.ToDiffMs-ch.FromDiffMs-ch.ChangeMs)) > 1e-9 {
			t.Errorf("change %v is not %v - %v", ch.ChangeMs, ch.ToDiffMs, ch.FromDiffMs)
		}
	}
	files, err := Tables(res)
	if err != nil {
		t.Fatal(err)
	}
	if tab := files[TableToolchains]; !strings.Contains(tab, `Change to go1.27.3`) || !strings.Contains(tab, `$\Delta$ go1.24.4`) {
		t.Errorf("toolchain table lacks its columns:\n%s", tab)
	}
	if !strings.Contains(files[NumbersFile], `\newcommand{\NetToolchainCount}{2}`) {
		t.Error("numbers lack the toolchain count")
	}
}

// One toolchain: the table says so and the change macros are dashes; a
// toolchain that lacks a series of the design is refused.
func TestToolchainBadInput(t *testing.T) {
	t.Run("one toolchain", func(t *testing.T) {
		d := synthDesign()
		rows := readRows(t, netdata.ColumnsV1, synthRows(d))
		res, err := Analyze(&d, rows, Params{}, "data/net/x", "x", "synth")
		if err != nil {
			t.Fatal(err)
		}
		if tc := res.Toolchains; len(tc.Levels) != 1 || len(tc.Changes) != 0 || !strings.Contains(tc.Note, "one toolchain only (go1.27.3)") {
			t.Errorf("toolchains %+v", tc)
		}
		files, err := Tables(res)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(files[TableToolchains], "The run has one toolchain only") {
			t.Errorf("the table does not say it has one toolchain:\n%s", files[TableToolchains])
		}
		if !strings.Contains(files[NumbersFile], `\newcommand{\NetToolchainMaxChangeMs}{---}`) {
			t.Error("the change macro is not a dash")
		}
	})
	t.Run("toolchain missing a series", func(t *testing.T) {
		d, rows := twoToolchains(t)
		rows = slices.DeleteFunc(rows, func(r Row) bool {
			return r.Toolchain == "go1.27.3" && r.Scenario == "far" && r.Round == 80 && r.Group == "X25519MLKEM768"
		})
		_, err := Analyze(&d, rows, Params{}, "data/net/x", "x", "synth")
		if err == nil || !strings.Contains(err.Error(), "toolchain go1.27.3") {
			t.Errorf("error %v, want one naming the toolchain", err)
		}
	})
}

// readRows reads rows under header as records.csv.gz.
func readRows(t *testing.T, header []string, rows [][]string) []Row {
	t.Helper()
	out, err := ReadRecords(bytes.NewReader(gzWith(t, header, rows)), "synthetic")
	if err != nil {
		t.Fatal(err)
	}
	return out
}
