package netrun

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"pqrepro/datasets/netdata"
)

// registrationValue returns the value of a key line of the mechanism's
// second registration (a line that starts at the margin with "key:").
func registrationValue(t *testing.T, key string) string {
	t.Helper()
	b, err := os.ReadFile("../../../analysis/ttlb/mechanism2.txt")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, key+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	t.Fatalf("mechanism2.txt has no %s: line", key)
	return ""
}

// TestPadBytesMatchRegistration: the pad computed from its parts (1,088 +
// 32 - 32 - 8) is the registration's pad-bytes, and the arm's name its arm.
func TestPadBytesMatchRegistration(t *testing.T) {
	if PadBytes != 1080 || HybridServerShareBytes != 1120 {
		t.Errorf("PadBytes %d, hybrid share %d; want 1080 and 1120", PadBytes, HybridServerShareBytes)
	}
	if v := registrationValue(t, "pad-bytes"); v != strconv.Itoa(PadBytes) {
		t.Errorf("registration pad-bytes %q, PadBytes %d", v, PadBytes)
	}
	if v := registrationValue(t, "arm"); v != PaddedArm {
		t.Errorf("registration arm %q, PaddedArm %q", v, PaddedArm)
	}
}

// paddedSpec is controlledSpec with the padded arm on and the given
// transfer_round.
func paddedSpec(t *testing.T, round int) *Spec {
	t.Helper()
	s := controlledSpec(t, `["cubic", "bbr"]`)
	ps := s.Profiles["full"]
	ps.TransferPaddedArm, ps.TransferRound = true, round
	s.Profiles["full"] = ps
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestPaddedArmPlan: with the arm on every transfer series holds the three
// arms, each triple of positions 3k..3k+2 holds each arm once in a seeded
// order, the arm dials X25519 and staples PadBytes, and the rounds are
// untouched.
func TestPaddedArmPlan(t *testing.T) {
	s := paddedSpec(t, 60)
	p, err := s.Plan("full")
	if err != nil {
		t.Fatal(err)
	}
	plain := controlledSpec(t, `["cubic", "bbr"]`)
	q, _ := plain.Plan("full")
	if len(p.Series()) != len(q.Series()) {
		t.Errorf("the arm changed the rounds' series")
	}
	if p.TransferPadBytes != PadBytes || p.armName(2) != PaddedArm || p.armName(0) != "X25519" || p.armGroup(2).String() != "X25519" {
		t.Errorf("arms: pad %d, names %q %q, group %v", p.TransferPadBytes, p.armName(0), p.armName(2), p.armGroup(2))
	}
	if l := p.armListen("10.0.0.2:4435", 2); l != "10.0.0.2:4435=X25519/staple=1080" {
		t.Errorf("padded listener %q", l)
	}
	if l := p.armListen("10.0.0.2:4433", 0); l != "10.0.0.2:4433=X25519" {
		t.Errorf("plain listener %q", l)
	}
	xs := p.TransferSeries()
	if len(xs) != 3*5*2*2 {
		t.Errorf("%d transfer series, want 60", len(xs))
	}
	for _, x := range xs {
		if !slices.Equal(x.Groups, []int{0, 1, 2}) || x.Handshakes() != 180 {
			t.Fatalf("%s: arms %v, %d connections", x.ID, x.Groups, x.Handshakes())
		}
	}
	x := xs[0]
	steps := seriesSteps(p.transferOrder(), x.Groups, x.Round, p.Warmup, s.Seeds.Order, x.Link.Seed)
	var rec []step
	for _, st := range steps {
		if !st.warm {
			rec = append(rec, st)
		}
	}
	orders := map[string]bool{}
	for k := 0; k < len(rec); k += 3 {
		got := []int{rec[k].gi, rec[k+1].gi, rec[k+2].gi}
		orders[strconv.Itoa(got[0])+strconv.Itoa(got[1])+strconv.Itoa(got[2])] = true
		if !slices.Equal(slices.Sorted(slices.Values(got)), []int{0, 1, 2}) || rec[k].seq != k/3 {
			t.Fatalf("triple %d: arms %v seq %d", k/3, got, rec[k].seq)
		}
	}
	if len(orders) < 4 {
		t.Errorf("only %d orders of the arms over 60 triples: not shuffled", len(orders))
	}
}

// TestPaddedArmBadInput: the arm without interleaving, a pad other than
// the registration's, and the arm without X25519 are refused by Validate.
func TestPaddedArmBadInput(t *testing.T) {
	for _, tc := range []struct {
		name, extra, want string
	}{
		{"serial", "transfer_padded_arm = true\ntransfer_order = \"serial\"", "without transfer_order = \"interleaved\""},
		{"no order", "transfer_padded_arm = true", "without transfer_order"},
		{"pad", "transfer_padded_arm = true\ntransfer_order = \"interleaved\"\ntransfer_pad_bytes = 1000", "registration's pad is 1080"},
		{"pad without arm", "transfer_order = \"interleaved\"\ntransfer_pad_bytes = 1080", "transfer_pad_bytes = 1080"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text := strings.Replace(tinySpec(0, "5000", "[3]"), "[runs]", "toolchains = [\"go1.27.3\"]\ntransfer_sizes = [0, 20000]\ntransfer_round = 4\n"+tc.extra+"\n[runs]", 1)
			p := filepath.Join(t.TempDir(), "net.toml")
			os.WriteFile(p, []byte(text), 0o644)
			if _, err := LoadSpec(p); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
	// Matching pad: accepted.
	text := strings.Replace(tinySpec(0, "5000", "[3]"), "[runs]", "toolchains = [\"go1.27.3\"]\ntransfer_sizes = [0, 20000]\ntransfer_round = 4\ntransfer_order = \"interleaved\"\ntransfer_padded_arm = true\ntransfer_pad_bytes = 1080\n[runs]", 1)
	p := filepath.Join(t.TempDir(), "net.toml")
	os.WriteFile(p, []byte(text), 0o644)
	if _, err := LoadSpec(p); err != nil {
		t.Errorf("the registration's pad refused: %v", err)
	}
	noX := strings.Replace(text, `groups = ["X25519", "X25519MLKEM768"]`, `groups = ["X25519MLKEM768", "CurveP256"]`, 1)
	os.WriteFile(p, []byte(noX), 0o644)
	if _, err := LoadSpec(p); err == nil || !strings.Contains(err.Error(), "lack X25519") {
		t.Errorf("arm without X25519: %v", err)
	}
}

// TestPaddedArmEstimate logs the full profile's estimate with the
// controlled block (sizes 0 .. 1 MiB, CUBIC and BBR, interleaved) and
// the padded arm at transfer_round 60, 40 and 30; the arm adds half
// the block's connections.
func TestPaddedArmEstimate(t *testing.T) {
	var last time.Duration
	for _, round := range []int{30, 40, 60} {
		e, err := Estimate(paddedSpec(t, round), "full")
		if err != nil {
			t.Fatal(err)
		}
		if e.Expected <= last {
			t.Errorf("round %d: expected %v, not above the smaller round's %v", round, e.Expected, last)
		}
		last = e.Expected
		t.Logf("transfer_round %d: %v; the transfer block %v of it", round, e, blockSpan(e))
	}
	c := controlledSpec(t, `["cubic", "bbr"]`)
	e, err := Estimate(c, "full")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("without the arm, transfer_round 60: %v; the transfer block %v of it", e, blockSpan(e))
}

// blockSpan is the planned span of the transfer block: its first series'
// start to its last one's end.
func blockSpan(e Estimation) time.Duration {
	var lo, hi time.Duration = -1, 0
	for _, x := range e.Series {
		if !x.Block {
			continue
		}
		if lo < 0 || x.Start < lo {
			lo = x.Start
		}
		hi = max(hi, x.End)
	}
	return (hi - lo).Round(time.Second)
}

// TestRunControlledPaddedArm records a controlled block with the padded
// arm into a temporary tree: every triple holds the three arms, and the
// size-0 connections' server payload bytes (median per series) of the
// padded arm are the hybrid's within 16 bytes and about 1,088 above
// X25519's.
func TestRunControlledPaddedArm(t *testing.T) {
	needRoot(t)
	spec := strings.Replace(tinySpec(0, "5000", "[3]"), "[runs]", `toolchains = ["go1.27.3"]
transfer_sizes = [0, 20000]
transfer_round = 5
transfer_order = "interleaved"
transfer_padded_arm = true
[runs]`, 1)
	cfg, log := tree(t, spec)
	copyEndpoint(t, cfg.Root)
	buildOrSkip(t, cfg.Root, "go1.27.3")
	dir := runOnce(t, cfg, log)
	recs := transferRows(t, dir)
	if len(recs) != 2*3*5 {
		t.Fatalf("%d transfer records, want 30", len(recs))
	}
	bySeries := map[string][]netdata.Row{}
	for _, r := range recs {
		if !r.OK || r.Cap == nil || r.Cap.ThsNs == nil {
			t.Errorf("%s: row %+v, want a complete handshake", r.Series, r)
			continue
		}
		want := r.Group
		if r.Group == PaddedArm {
			want = "X25519"
		}
		if r.Cap.Group != want {
			t.Errorf("%s %s: cap_group %q, want %q", r.Series, r.Group, r.Cap.Group, want)
		}
		bySeries[r.Series] = append(bySeries[r.Series], r)
	}
	for id, rows := range bySeries {
		slices.SortFunc(rows, func(a, b netdata.Row) int { return a.Position - b.Position })
		for k := 0; k+2 < len(rows); k += 3 {
			arms := []string{rows[k].Group, rows[k+1].Group, rows[k+2].Group}
			slices.Sort(arms)
			if !slices.Equal(arms, []string{"X25519", PaddedArm, "X25519MLKEM768"}) {
				t.Errorf("%s: triple %d holds %v", id, k/3, arms)
			}
		}
		if !strings.Contains(id, "-0B-") {
			continue
		}
		med := map[string]int64{}
		for _, g := range []string{"X25519", PaddedArm, "X25519MLKEM768"} {
			var v []int64
			for _, r := range rows {
				if r.Group == g && r.Cap != nil {
					v = append(v, r.Cap.PayloadBytesS2C)
				}
			}
			slices.Sort(v)
			if len(v) == 0 {
				t.Fatalf("%s: no %s rows", id, g)
			}
			med[g] = v[len(v)/2]
		}
		t.Logf("%s: size-0 server payload bytes, median: X25519 %d, %s %d, X25519MLKEM768 %d", id, med["X25519"], PaddedArm, med[PaddedArm], med["X25519MLKEM768"])
		if d := med[PaddedArm] - med["X25519MLKEM768"]; d < -16 || d > 16 {
			t.Errorf("%s: padded %d vs hybrid %d: %d bytes apart, want within 16", id, med[PaddedArm], med["X25519MLKEM768"], d)
		}
		if d := med[PaddedArm] - med["X25519"]; d < 1088-16 || d > 1088+16 {
			t.Errorf("%s: padded %d vs X25519 %d: %d bytes apart, want about 1088", id, med[PaddedArm], med["X25519"], d)
		}
	}
	if len(bySeries) != 2 {
		t.Errorf("%d series, want 2", len(bySeries))
	}
	b, err := os.ReadFile(filepath.Join(dir, "meta.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"padded_arm"`) || !strings.Contains(string(b), `"pad_bytes": 1080`) {
		t.Errorf("meta.json says nothing of the padded arm")
	}
}
