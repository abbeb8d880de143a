package tlsstudy

import (
	"math"
	"slices"
	"strings"
	"testing"

	"pqrepro/analysis/claims"
	"pqrepro/analysis/claims/claimstest"
	"pqrepro/datasets/tlsdata"
)

// gapSpec is the paper's four configurations in the design's 14 cells.
var gapSpec = synthSpec{
	seed:  11,
	extra: []string{"ed25519/X25519", "mldsa87/X25519", "ed25519/MLKEM1024", "ed25519/SecP384r1MLKEM1024"},
	n:     150, warmups: 1, rounds: 15, cells: true, cellN: 150,
}

func gapParams(c Cell) Params {
	p := testParams()
	p.Cell = c
	p.Fallback = fallbackCell
	return p
}

// The spec's [paper.cell] and [paper.fallback].
var (
	primaryCell  = Cell{Stack: tlsdata.StackOpenSSLCLI, Path: "docker", KeyShare: KeyShareDirect}
	fallbackCell = Cell{Stack: tlsdata.StackOpenSSLCLI, Path: "bridge", KeyShare: KeyShareDirect}
)

func mustCell(s string) Cell {
	c, err := tlsdata.ParseCell(s)
	if err != nil {
		panic(err)
	}
	return c
}

func TestGapAllCells(t *testing.T) {
	res, err := Analyze(gapSpec.records(), gapParams(primaryCell), Input{Path: "synthetic"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Gap.Cells) != 14 {
		t.Fatalf("%d cells, want 14", len(res.Gap.Cells))
	}
	if res.Primary.Status != PrimaryStated || res.Primary.Judged != primaryCell {
		t.Errorf("primary choice %+v, want the stated cell", res.Primary)
	}
	// The families are the primary cell's.
	if got := res.Params.Paper["hybrid"]; got != "ed25519/SecP384r1MLKEM1024/openssl-cli" {
		t.Errorf("paper hybrid %s, want the primary cell's ID", got)
	}
	for _, c := range res.Gap.Cells {
		if c.Primary != (c.Cell == primaryCell) {
			t.Errorf("cell %s: primary %v", c.Cell, c.Primary)
		}
		if !c.complete() || len(c.Comparisons) != 3 {
			t.Fatalf("cell %s incomplete: %+v", c.Cell, c.Missing)
		}
		if c.Primary {
			for i, cmp := range c.Comparisons {
				if fam := res.Families["paper"].Comparisons[i]; fam.MedianDiffMs != cmp.MedianDiffMs || fam.PHolm != cmp.PHolm || fam.Role != cmp.Role {
					t.Errorf("primary cell %s: %+v differs from the paper family's %+v", cmp.Role, cmp, fam)
				}
			}
		}
	}
	// Pairs per factor in the design, the primary pair of each (the
	// addendum's chain from go/loopback to the primary cell) and the
	// pairs the design lacks.
	want := map[string]struct {
		pairs   int
		primary [2]string
		missing []string
	}{
		"stack":    {4, [2]string{"go/bridge/direct", "openssl/bridge/direct"}, nil},
		"process":  {4, [2]string{"openssl/bridge/direct", "openssl-cli/bridge/direct"}, []string{"openssl-cli/docker/direct has no openssl/docker/direct", "openssl-cli/docker/hrr has no openssl/docker/hrr"}},
		"path":     {6, [2]string{"openssl-cli/loopback/direct", "openssl-cli/bridge/direct"}, nil},
		"runtime":  {2, [2]string{"openssl-cli/bridge/direct", "openssl-cli/docker/direct"}, []string{"go/bridge/direct has no go/docker/direct", "go/bridge/hrr has no go/docker/hrr", "openssl/bridge/direct has no openssl/docker/direct", "openssl/bridge/hrr has no openssl/docker/hrr"}},
		"keyshare": {7, [2]string{"openssl-cli/docker/direct", "openssl-cli/docker/hrr"}, nil},
	}
	var names []string
	for _, f := range res.Gap.Factors {
		names = append(names, f.Factor)
		w := want[f.Factor]
		if len(f.Effects) != 3*w.pairs || f.Note != "" || len(f.Levels) != 2 {
			t.Fatalf("factor %s: %d effects (want %d), note %q, levels %v", f.Factor, len(f.Effects), 3*w.pairs, f.Note, f.Levels)
		}
		if !slices.Equal(f.Missing, w.missing) {
			t.Errorf("factor %s: missing pairs %q, want %q", f.Factor, f.Missing, w.missing)
		}
		primaries := 0
		for _, e := range f.Effects {
			if e.Primary {
				primaries++
				if e.From != mustCell(w.primary[0]) || e.To != mustCell(w.primary[1]) {
					t.Errorf("factor %s: primary pair %s -> %s, want %s -> %s", f.Factor, e.From, e.To, w.primary[0], w.primary[1])
				}
			}
			want := 0.0
			if f.Factor == "stack" && e.Role == "hybrid" {
				want = (synthOpenSSLHybrid - 1) * groupCostMs[synthHybridGroupName]
			}
			if math.Abs(float64(e.ChangeMs)-want) > 0.6 {
				t.Errorf("factor %s %s %s->%s: change %.3f ms, want about %.3f", f.Factor, e.Role, e.From, e.To, e.ChangeMs, want)
			}
			if !(e.Lower <= e.ChangeMs && e.ChangeMs <= e.Upper) {
				t.Errorf("factor %s %s: change %.3f outside its interval [%.3f, %.3f]", f.Factor, e.Role, e.ChangeMs, e.Lower, e.Upper)
			}
			if e.PHolm < e.P || e.P <= 0 || e.P > 1 {
				t.Errorf("factor %s %s: p %v, Holm %v", f.Factor, e.Role, e.P, e.PHolm)
			}
			if d := float64(e.DistanceFromMs-e.DistanceToMs) - float64(e.TowardMs); math.Abs(d) > 1e-3 {
				t.Errorf("toward %v is not distance from %v - distance to %v", e.TowardMs, e.DistanceFromMs, e.DistanceToMs)
			}
			// The model's Go hybrid sits at the published +9.05 ms, so
			// OpenSSL's dearer one moves it away, significantly.
			if f.Factor == "stack" && e.Role == "hybrid" && (e.TowardMs >= 0 || float64(e.PHolm) >= 0.05) {
				t.Errorf("OpenSSL's dearer hybrid moves the increase away from +9.048 ms: toward %v, Holm p %v", e.TowardMs, e.PHolm)
			}
		}
		if primaries != 3 {
			t.Errorf("factor %s: %d effects in the primary pair, want 3", f.Factor, primaries)
		}
	}
	if !slices.Equal(names, []string{"stack", "process", "path", "runtime", "keyshare"}) {
		t.Errorf("factors %v, want stack, process, path, runtime, keyshare", names)
	}
	files, err := Tables(res)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`$\star$ OpenSSL s\_server/s\_client, docker, direct`, "Published (OpenSSL 3.5.2, Docker)"} {
		if !strings.Contains(string(files[TableGap]), want) {
			t.Errorf("gap table lacks %q", want)
		}
	}
	if !strings.Contains(string(files[TableFactors]), "openssl/bridge/direct has no openssl/docker/direct") {
		t.Error("the factors table does not name the pairs the design lacks")
	}
	num := string(files[NumbersFile])
	for _, want := range []string{`\newcommand{\TlsGapStackHybridChangeMs}{+`, `\newcommand{\TlsGapProcessHybridChangeMs}{`,
		`\newcommand{\TlsGapRuntimeHybridChangeMs}{`, `\newcommand{\TlsGapStackHeld}{bridge, direct}`,
		`\newcommand{\TlsPrimaryCellStatus}{primary}`, `\newcommand{\TlsGapRuntimePairs}{2}`,
		`\newcommand{\TlsGapProcessBaselineChangeMs}{+1.`} { // the model's process adds 1.5 ms to every handshake
		if !strings.Contains(num, want) {
			t.Errorf("numbers lack %q", want)
		}
	}
	if _, err := figureList(res, nil); err != nil {
		t.Fatal(err)
	}
}

// A run without the docker cells (no Docker on its host) is judged on
// [paper.fallback] and says so; the runtime factor then has one level.
func TestGapFallback(t *testing.T) {
	spec := gapSpec
	spec.noDocker = true
	res, err := Analyze(spec.records(), gapParams(primaryCell), Input{Path: "synthetic"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Primary.Status != PrimaryFallback || res.Primary.Judged != fallbackCell || res.Params.Cell != fallbackCell {
		t.Fatalf("primary choice %+v (params cell %s), want the fallback", res.Primary, res.Params.Cell)
	}
	if !strings.Contains(res.Primary.Note, "fallback cell openssl-cli/bridge/direct") {
		t.Errorf("note %q does not name the fallback", res.Primary.Note)
	}
	if got := res.Params.Paper["hybrid"]; got != "ed25519/SecP384r1MLKEM1024/openssl-cli" {
		t.Errorf("paper hybrid %s, want the fallback cell's ID", got)
	}
	for _, f := range res.Gap.Factors {
		if f.Factor == "runtime" && (len(f.Effects) != 0 || !strings.Contains(f.Note, "one of runtime's levels only (bridge)")) {
			t.Errorf("runtime factor %+v, want no effects and a note", f)
		}
	}
	files, err := Tables(res)
	if err != nil {
		t.Fatal(err)
	}
	num := string(files[NumbersFile])
	for _, want := range []string{`\newcommand{\TlsPrimaryCellStatus}{fallback}`, `\newcommand{\TlsGapRuntimeHybridChangeMs}{---}`,
		`judged on the fallback stated before the run, OpenSSL s\_server/s\_client, bridge, direct`} {
		if !strings.Contains(num, want) {
			t.Errorf("numbers lack %q", want)
		}
	}
	if !strings.Contains(string(files[TableGap]), `$\star$ OpenSSL s\_server/s\_client, bridge, direct`) {
		t.Error("the gap table does not star the fallback cell")
	}
}

// A run with neither the primary cell nor the fallback (the runs recorded
// before the rule) is described on the nearest cell it has and its
// claims are not judged; it does not fail.
func TestGapNoPrimary(t *testing.T) {
	recs := slices.DeleteFunc(gapSpec.records(), func(r tlsdata.Record) bool { return r.StackName() == tlsdata.StackOpenSSLCLI })
	res, err := Analyze(recs, gapParams(primaryCell), Input{Path: "synthetic"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Primary.Status != PrimaryAbsent || res.Primary.Judged != (Cell{Stack: tlsdata.StackOpenSSL, Path: "bridge", KeyShare: KeyShareDirect}) {
		t.Fatalf("primary choice %+v, want absent, described on openssl/bridge/direct", res.Primary)
	}
	if !strings.Contains(res.Primary.Note, "primary cell not in this run") {
		t.Errorf("note %q", res.Primary.Note)
	}
	for _, c := range res.Gap.Cells {
		if c.Primary {
			t.Errorf("cell %s is marked primary in a run without the primary cell", c.Cell)
		}
	}
	b, err := MarshalResults(res)
	if err != nil {
		t.Fatal(err)
	}
	back, err := DecodeResults("tls.json", b)
	if err != nil {
		t.Fatalf("results of a run without the primary cell do not read back: %v", err)
	}
	files, err := Tables(back)
	if err != nil {
		t.Fatal(err)
	}
	num := string(files[NumbersFile])
	if !strings.Contains(num, `\newcommand{\TlsPrimaryCellStatus}{absent}`) {
		t.Error("numbers do not say the primary cell is absent")
	}
	// The remaining gaps describe the stand-in, not the table's first cell.
	for _, c := range back.Gap.Cells {
		if c.Cell == back.Primary.Judged {
			want := signed(Published.Increases["hybrid"].IncreaseMs-float64(c.role("hybrid").Rounds.IncreaseMs), 3)
			if !strings.Contains(num, `\newcommand{\TlsGapHybridRemainingMs}{`+want+`}`) {
				t.Errorf("numbers lack the stand-in's remaining hybrid gap %s", want)
			}
		}
	}
	for id, e := range claimstest.Evaluate(t, Claims(), back) {
		if e.Verdict != claims.NotMeasurable || !strings.Contains(e.Reason, "primary cell not in this run") {
			t.Errorf("claim %s: %s (%s), want not measurable: primary cell not in this run", id, e.Verdict, e.Reason)
		}
	}
}

// Bad input: a cell that lacks one of the paper's configurations is
// reported with what it lacks and drops out of the effects; a run with
// one stack has no stack effect; a run without the primary cell is
// refused.
func TestGapBadInput(t *testing.T) {
	recs := gapSpec.records()
	hrrKem := inCell("ed25519/MLKEM1024", Cell{Stack: tlsdata.StackGo, Path: "loopback", KeyShare: KeyShareHRR})
	t.Run("cell missing a configuration", func(t *testing.T) {
		rs := slices.DeleteFunc(slices.Clone(recs), func(r tlsdata.Record) bool { return r.Config == hrrKem && r.PathOrDefault() == "loopback" })
		res, err := Analyze(rs, gapParams(primaryCell), Input{Path: "synthetic"})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range res.Gap.Cells {
			want := c.Cell == Cell{Stack: tlsdata.StackGo, Path: "loopback", KeyShare: KeyShareHRR}
			if got := slices.Equal(c.Missing, []string{hrrKem}); got != want {
				t.Errorf("cell %s: missing %v", c.Cell, c.Missing)
			}
		}
		// The cell takes part in a pair of the stack, the path and the
		// key-share factors: 3 x 3 effects fewer than 23 pairs x 3.
		if n := countEffects(res); n != 69-9 {
			t.Errorf("%d effects, want 60", n)
		}
		files, err := Tables(res)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(files[TableGap]), "lacks "+hrrKem) {
			t.Error("the gap table does not say what the cell lacks")
		}
	})
	t.Run("one stack only", func(t *testing.T) {
		rs := slices.DeleteFunc(slices.Clone(recs), func(r tlsdata.Record) bool { return r.StackName() != tlsdata.StackGo })
		res, err := Analyze(rs, gapParams(Cell{Stack: tlsdata.StackGo, Path: "bridge", KeyShare: KeyShareDirect}), Input{Path: "synthetic"})
		if err != nil {
			t.Fatal(err)
		}
		f := res.Gap.Factors[0]
		if f.Factor != "stack" || len(f.Effects) != 0 || !strings.Contains(f.Note, "one of stack's levels only (go)") {
			t.Errorf("stack factor %+v, want no effects and a note", f)
		}
		if f := res.Gap.Factors[2]; f.Factor != "path" || len(f.Effects) != 6 {
			t.Errorf("path factor: %d effects, want 2 pairs x 3", len(f.Effects))
		}
		files, err := Tables(res)
		if err != nil {
			t.Fatal(err)
		}
		num := string(files[NumbersFile])
		for _, want := range []string{`\newcommand{\TlsGapStackHybridChangeMs}{---}`, `\newcommand{\TlsGapStackNote}{the run has one of stack's levels only (go)`} {
			if !strings.Contains(num, want) {
				t.Errorf("numbers lack %q", want)
			}
		}
		if !strings.Contains(string(files[TableFactors]), "one of stack's levels only") {
			t.Error("the factors table does not say the stack has one level")
		}
	})
	t.Run("no cell to describe", func(t *testing.T) {
		rs := slices.DeleteFunc(slices.Clone(recs), func(r tlsdata.Record) bool {
			return r.StackName() == tlsdata.StackOpenSSLCLI || r.Group == "MLKEM1024"
		})
		_, err := Analyze(rs, gapParams(primaryCell), Input{Path: "synthetic"})
		if err == nil || !strings.Contains(err.Error(), "primary cell openssl-cli/docker/direct") || !strings.Contains(err.Error(), "no cell of the run") {
			t.Errorf("error %v, want one naming the primary cell and saying no cell has the paper's configurations", err)
		}
	})
	t.Run("primary cell lacks a configuration", func(t *testing.T) {
		kem := inCell("ed25519/MLKEM1024", primaryCell)
		rs := slices.DeleteFunc(slices.Clone(recs), func(r tlsdata.Record) bool { return r.Config == kem && r.Path == "docker" })
		_, err := Analyze(rs, gapParams(primaryCell), Input{Path: "synthetic"})
		if err == nil || !strings.Contains(err.Error(), "primary cell openssl-cli/docker/direct") {
			t.Errorf("error %v, want one naming the primary cell", err)
		}
	})
	t.Run("bad cell parameter", func(t *testing.T) {
		if _, err := tlsdata.ParseCell("openssl/wan/direct"); err == nil || !strings.Contains(err.Error(), `path "wan"`) {
			t.Errorf("ParseCell: %v", err)
		}
		if _, err := tlsdata.ParseCell("openssl/bridge"); err == nil {
			t.Error("ParseCell accepted two parts")
		}
		p := gapParams(Cell{Stack: "boring"})
		if err := p.Validate(); err == nil || !strings.Contains(err.Error(), `stack "boring"`) {
			t.Errorf("Validate: %v", err)
		}
		p = gapParams(primaryCell)
		p.Paper = slices.Clone(p.Paper)
		p.Paper[2] += "/openssl"
		if err := p.Validate(); err == nil || !strings.Contains(err.Error(), "without /hrr, /openssl or /openssl-cli") {
			t.Errorf("Validate: %v", err)
		}
	})
}
