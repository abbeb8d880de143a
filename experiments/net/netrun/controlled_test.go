package netrun

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"pqrepro/experiments/instruments/tcpns"
)

// controlledSpec is the committed spec with the controlled transfer block
// (issue 41) in its full profile, without the padded arm and at 60
// connections per series: size 0 in the block, the groups interleaved,
// the congestion controls ccs (a TOML array). It is set on the decoded
// spec, so it holds whatever the committed profile lists, and validated.
func controlledSpec(t *testing.T, ccs string) *Spec {
	t.Helper()
	s, err := LoadSpec("../../net.toml")
	if err != nil {
		t.Fatal(err)
	}
	var list []string
	for _, f := range strings.Split(strings.Trim(ccs, "[] "), ",") {
		if f = strings.Trim(strings.TrimSpace(f), `"`); f != "" {
			list = append(list, f)
		}
	}
	ps := s.Profiles["full"]
	ps.TransferSizes = []int{0, 10240, 51200, 204800, 1048576}
	ps.TransferOrder, ps.TransferCC = Interleaved, list
	ps.TransferPaddedArm, ps.TransferPadBytes, ps.TransferRound = false, 0, 60
	s.Profiles["full"] = ps
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestControlledPlan: the committed spec's profiles plan the controlled
// block (issue 41: groups and the padded arm interleaved, CUBIC and BBR,
// size 0 inside); a spec with the keys keeps the rounds' series, and every
// (scenario, size) has one series per congestion control and toolchain
// holding every arm, sharing one link seed of its own, size 0 included.
func TestControlledPlan(t *testing.T) {
	s, err := LoadSpec("../../net.toml")
	if err != nil {
		t.Fatal(err)
	}
	for _, prof := range []string{"quick", "full"} {
		p, err := s.Plan(prof)
		if err != nil {
			t.Fatal(err)
		}
		if !p.Controlled() || p.transferOrder() != Interleaved || !p.TransferPaddedArm {
			t.Errorf("%s: the committed spec plans no controlled block with the padded arm (order %q, cc %v, padded %v)", prof, p.TransferOrder, p.TransferCC, p.TransferPaddedArm)
		}
		zero := 0
		for _, x := range p.TransferSeries() {
			if (x.CC != "cubic" && x.CC != "bbr") || len(x.Groups) != 3 || x.ResponseBytes < 0 {
				t.Errorf("%s: committed spec's transfer series %+v", prof, x)
			}
			if x.ResponseBytes == 0 {
				zero++
			}
		}
		if zero == 0 {
			t.Errorf("%s: no size-0 series inside the block", prof)
		}
	}
	old, _ := s.Plan("full")
	full, err := controlledSpec(t, `["cubic", "bbr"]`).Plan("full")
	if err != nil {
		t.Fatal(err)
	}
	if !full.Controlled() || full.transferOrder() != Interleaved {
		t.Fatalf("controlled plan: order %q, cc %v", full.TransferOrder, full.TransferCC)
	}
	if !reflect.DeepEqual(full.Series(), old.Series()) {
		t.Error("the controlled block changed the rounds' series")
	}
	xfer := full.TransferSeries()
	if want := 3 * 5 * 2 * 2; len(xfer) != want {
		t.Fatalf("%d transfer series, want %d (3 scenarios x 5 sizes x 2 congestion controls x 2 toolchains)", len(xfer), want)
	}
	if xfer[0].ID != "lan-0B-cubic-go1.24.4" || xfer[1].ID != "lan-0B-cubic-go1.27.3" || xfer[2].ID != "lan-0B-bbr-go1.24.4" {
		t.Errorf("first series %s, %s, %s", xfer[0].ID, xfer[1].ID, xfer[2].ID)
	}
	roundSeeds := map[uint64]bool{}
	for _, r := range old.Series() {
		roundSeeds[r.Link.Seed] = true
	}
	seed := map[string]uint64{}
	for _, x := range xfer {
		if !x.Block || !slices.Equal(x.Groups, []int{0, 1}) || x.Round != full.TransferRound || x.Handshakes() != 2*full.TransferRound {
			t.Errorf("%s: block %v, groups %v, round %d", x.ID, x.Block, x.Groups, x.Round)
		}
		if x.CC != "cubic" && x.CC != "bbr" {
			t.Errorf("%s: cc %q", x.ID, x.CC)
		}
		if roundSeeds[x.Link.Seed] {
			t.Errorf("%s shares its link seed with a round series", x.ID)
		}
		key := full.Scenarios[x.Scenario].Name + "/" + itoa(x.ResponseBytes)
		if s, ok := seed[key]; ok && s != x.Link.Seed {
			t.Errorf("%s: seed %d, another series of %s has %d", x.ID, x.Link.Seed, key, s)
		}
		seed[key] = x.Link.Seed
	}
	if seed["lan/0"] == seed["lan/10240"] {
		t.Error("two sizes share a link seed")
	}
	// The estimate plans the block: size 0 costs no transfer time.
	e, err := Estimate(controlledSpec(t, `["cubic", "bbr"]`), "full")
	if err != nil {
		t.Fatal(err)
	}
	for _, se := range e.Series {
		if se.ID == "far-0B-bbr-go1.24.4" && se.Minimum != roundMinimum(se) {
			t.Errorf("size 0 minimum %v, want the handshake-only %v", se.Minimum, roundMinimum(se))
		}
	}
}

// roundMinimum is the minimum of a series of handshake-only connections.
func roundMinimum(se SeriesEstimate) time.Duration {
	return time.Duration(se.Connections) * RTTsPerConnection * se.Link.RTT()
}

// TestControlledOrder: inside a controlled series the groups are
// interleaved: after the warm-ups every pair of connections holds both
// groups, in an order drawn per pair (both orders occur, so it is not a
// fixed alternation), from the order seed and the series' link seed: the
// same seeds give the same order, another order seed another one.
func TestControlledOrder(t *testing.T) {
	sp := controlledSpec(t, `["cubic", "bbr"]`)
	p, err := sp.Plan("full")
	if err != nil {
		t.Fatal(err)
	}
	x := p.TransferSeries()[len(p.TransferSeries())-1]
	steps := seriesSteps(p.transferOrder(), x.Groups, x.Round, p.Warmup, sp.Seeds.Order, x.Link.Seed)
	rec := steps[len(x.Groups)*p.Warmup:]
	if len(rec) != x.Handshakes() {
		t.Fatalf("%d recorded steps, want %d", len(rec), x.Handshakes())
	}
	firsts := map[int]int{}
	for k := 0; k < len(rec); k += 2 {
		a, b := rec[k], rec[k+1]
		if a.gi == b.gi || a.seq != k/2 || b.seq != k/2 {
			t.Fatalf("pair %d: %+v %+v, want both groups once", k/2, a, b)
		}
		firsts[a.gi]++
	}
	if firsts[0] == 0 || firsts[1] == 0 {
		t.Errorf("one group always first (%v): a fixed alternation, not a random order", firsts)
	}
	if !reflect.DeepEqual(steps, seriesSteps(p.transferOrder(), x.Groups, x.Round, p.Warmup, sp.Seeds.Order, x.Link.Seed)) {
		t.Error("the same seeds gave another order")
	}
	if reflect.DeepEqual(steps, seriesSteps(p.transferOrder(), x.Groups, x.Round, p.Warmup, sp.Seeds.Order+1, x.Link.Seed)) {
		t.Error("another order seed gave the same order")
	}
}

// TestCheckTransferCC: the congestion controls are checked against the
// kernel before any work; an unknown one, or one the kernel lacks, is an
// error naming the available ones; per socket, one outside the allowed
// list is fine; a plan without them reads nothing.
func TestCheckTransferCC(t *testing.T) {
	dir := t.TempDir()
	ipv4 := filepath.Join(dir, "net", "ipv4")
	if err := os.MkdirAll(ipv4, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]string{"tcp_available_congestion_control": "reno bbr cubic\n", "tcp_allowed_congestion_control": "reno bbr\n"} {
		if err := os.WriteFile(filepath.Join(ipv4, name), []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := tcpns.Reader{ProcSys: dir}
	if err := checkTransferCC(Plan{Profile: "full", TransferCC: []string{"cubic", "bbr"}}, r); err != nil {
		t.Errorf("cubic and bbr per socket: %v", err)
	}
	err := checkTransferCC(Plan{Profile: "full", TransferCC: []string{"cubic", "vegas"}}, r)
	if err == nil || !strings.Contains(err.Error(), `"vegas" is not available`) || !strings.Contains(err.Error(), "reno bbr cubic") || !strings.Contains(err.Error(), "profiles.full.transfer_cc") {
		t.Errorf("vegas: %v, want an error naming the available ones", err)
	}
	if err := checkTransferCC(Plan{}, tcpns.Reader{ProcSys: filepath.Join(dir, "none")}); err != nil {
		t.Errorf("no congestion control: %v", err)
	}
}
