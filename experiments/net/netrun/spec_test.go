package netrun

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"pqrepro/experiments/instruments/runlife"
)

func TestCommittedSpec(t *testing.T) {
	s, err := LoadSpec("../../net.toml")
	if err != nil {
		t.Fatal(err)
	}
	full, err := s.Plan("full")
	if err != nil {
		t.Fatal(err)
	}
	if n := full.Handshakes() / len(full.toolchains()); n != 96000 {
		t.Errorf("full profile: %d handshakes per toolchain, the paper has 96,000", n)
	}
	if len(full.Toolchains) == 0 || !strings.HasPrefix(full.Toolchains[0], "go1.24.") {
		t.Errorf("full profile toolchains %v: the primary must be Go 1.24, the original's", full.Toolchains)
	}
	if full.Parallel < 2 || !full.Exclusive[0] {
		t.Errorf("full profile: parallel %d, lan exclusive %v: want series in parallel, lan alone", full.Parallel, full.Exclusive)
	}
	if full.Order != Serial {
		t.Errorf("full profile order %q, the paper's is serial", full.Order)
	}
}

func TestSpecRejectsBadInput(t *testing.T) {
	base := tinySpec(0, "5000", "[10]")
	for _, tc := range []struct{ name, from, to, want string }{
		{"negative delay", "rtt_ms = 5.0", "rtt_ms = -5.0", "delay"},
		{"loss above 100", "loss_pct = 0.000", "loss_pct = 120.0", "loss"},
		{"zero rate", `rate = "100mbit"`, `rate = "0"`, "rate"},
		{"unknown group", `"X25519MLKEM768"]`, `"X25519KYBER"]`, "groups"},
		{"bad order", `order = "serial"`, `order = "random"`, "order"},
		{"unknown scenario in profile", `scenarios = ["tiny"]`, `scenarios = ["tiny", "moon"]`, `"moon" is not a [scenarios.*] table`},
		{"zero round", "rounds = [10]", "rounds = [0]", "rounds: 0 must be 1..1000000"},
		{"round of 99,999,999,999", "rounds = [10]", "rounds = [99999999999]", "rounds: 99999999999 must be 1..1000000"},
		{"infinite timeout", "timeout_ms = 5000", "timeout_ms = inf", "timeout_ms = +Inf: must be a finite number of milliseconds > 0 and at most 600000"},
		{"timeout of a year", "timeout_ms = 5000", "timeout_ms = 31536000000", "timeout_ms = 3.1536e+10: must be"},
		{"NaN timeout", "timeout_ms = 5000", "timeout_ms = nan", "timeout_ms = NaN: must be"},
		{"infinite profile timeout", "rounds = [10]", "rounds = [10]\ntimeout_ms = inf", "profiles.test.timeout_ms = +Inf: must be"},
		{"NaN profile timeout", "rounds = [10]", "rounds = [10]\ntimeout_ms = nan", "profiles.test.timeout_ms = NaN: must be"},
		{"huge warmup", "warmup = 1", "warmup = 99999999999", "warmup = 99999999999: must be 0..10000"},
		{"huge profile warmup", "rounds = [10]", "rounds = [10]\nwarmup = 99999999999", "profiles.test.warmup = 99999999999: must be 0..10000"},
		{"infinite tolerance", "tolerance_ms = 25.0", "tolerance_ms = inf", "selftest.tolerance_ms = +Inf: must be"},
		{"infinite late bound", "warmup = 1", "warmup = 1\nlate_bound_ms = inf", "late_bound_ms = +Inf: must be"},
		{"misspelt key", "warmup = 1", "warmpu = 1", "unknown key"},
		{"zero timeout", "timeout_ms = 5000", "timeout_ms = 0", "timeout_ms"},
		{"negative parallel", "rounds = [10]", "rounds = [10]\nparallel_series = -1", "parallel_series"},
		{"too parallel", "rounds = [10]", "rounds = [10]\nparallel_series = 1000", "parallel_series"},
		{"bad toolchain", "rounds = [10]", "rounds = [10]\ntoolchains = [\"1.24\"]", `"1.24" is not a Go release`},
		{"toolchain twice", "rounds = [10]", "rounds = [10]\ntoolchains = [\"go1.24.4\", \"go1.24.4\"]", "listed twice"},
		{"negative late bound", "warmup = 1", "warmup = 1\nlate_bound_ms = -1", "late_bound_ms"},
		{"unknown control", "rounds = [10]", "rounds = [10]\nserial_control = [\"tiny-10-X25519\", \"tiny-99-X25519\"]", `"tiny-99-X25519" is not a series of profile test`},
		{"zero response size", "rounds = [10]", "rounds = [10]\ntoolchains = [\"go1.24.4\"]\ntransfer_sizes = [0, 10]\ntransfer_round = 3", "0 is the handshake-only connection"},
		{"negative response size", "rounds = [10]", "rounds = [10]\ntoolchains = [\"go1.24.4\"]\ntransfer_sizes = [-10]\ntransfer_round = 3", "-10 is negative"},
		{"response above the bound", "rounds = [10]", "rounds = [10]\ntoolchains = [\"go1.24.4\"]\ntransfer_sizes = [16777217]\ntransfer_round = 3", "above the bound of 16777216 bytes"},
		{"sizes not ascending", "rounds = [10]", "rounds = [10]\ntoolchains = [\"go1.24.4\"]\ntransfer_sizes = [20, 10]\ntransfer_round = 3", "10 after 20"},
		{"size twice", "rounds = [10]", "rounds = [10]\ntoolchains = [\"go1.24.4\"]\ntransfer_sizes = [10, 10]\ntransfer_round = 3", "10 after 10"},
		{"sizes without round", "rounds = [10]", "rounds = [10]\ntoolchains = [\"go1.24.4\"]\ntransfer_sizes = [10]", "transfer_round = 0: must be 1..1000000"},
		{"round without sizes", "rounds = [10]", "rounds = [10]\ntoolchains = [\"go1.24.4\"]\ntransfer_round = 3", "transfer_round = 3 without transfer_sizes"},
		{"negative transfer parallel", "rounds = [10]", "rounds = [10]\ntoolchains = [\"go1.24.4\"]\ntransfer_sizes = [10]\ntransfer_round = 3\ntransfer_parallel = -1", "transfer_parallel = -1: must be 0..32"},
		{"transfer in process", "rounds = [10]", "rounds = [10]\ntransfer_sizes = [10]\ntransfer_round = 3", "needs endpoint builds"},
		{"control twice", "rounds = [10]", "rounds = [10]\nserial_control = [\"tiny-10-X25519\", \"tiny-10-X25519\"]", "listed twice"},
		// The controlled block (issue 41).
		{"size 0 not first", "rounds = [10]", "rounds = [10]\ntoolchains = [\"go1.24.4\"]\ntransfer_sizes = [10, 0]\ntransfer_round = 3\ntransfer_order = \"interleaved\"", "0 is the handshake-only connection"},
		{"controlled size above the bound", "rounds = [10]", "rounds = [10]\ntoolchains = [\"go1.24.4\"]\ntransfer_sizes = [0, 16777217]\ntransfer_round = 3\ntransfer_cc = [\"bbr\"]", "above the bound of 16777216 bytes"},
		{"controlled negative size", "rounds = [10]", "rounds = [10]\ntoolchains = [\"go1.24.4\"]\ntransfer_sizes = [-1]\ntransfer_round = 3\ntransfer_cc = [\"bbr\"]", "-1 is negative"},
		{"bad transfer order", "rounds = [10]", "rounds = [10]\ntoolchains = [\"go1.24.4\"]\ntransfer_sizes = [0, 10]\ntransfer_round = 3\ntransfer_order = \"alternate\"", `transfer_order = "alternate": use "serial" or "interleaved"`},
		{"cc not a name", "rounds = [10]", "rounds = [10]\ntoolchains = [\"go1.24.4\"]\ntransfer_sizes = [10]\ntransfer_round = 3\ntransfer_cc = [\"CUBIC\"]", `congestion control "CUBIC": want lowercase letters`},
		{"empty cc", "rounds = [10]", "rounds = [10]\ntoolchains = [\"go1.24.4\"]\ntransfer_sizes = [10]\ntransfer_round = 3\ntransfer_cc = [\"\"]", "empty congestion-control name"},
		{"cc twice", "rounds = [10]", "rounds = [10]\ntoolchains = [\"go1.24.4\"]\ntransfer_sizes = [10]\ntransfer_round = 3\ntransfer_cc = [\"bbr\", \"bbr\"]", `transfer_cc: "bbr" listed twice`},
		{"cc without sizes", "rounds = [10]", "rounds = [10]\ntoolchains = [\"go1.24.4\"]\ntransfer_cc = [\"bbr\"]", "transfer_order or transfer_cc without transfer_sizes"},
		{"cc with a remote host", "rounds = [10]", "rounds = [10]\ntoolchains = [\"go1.24.4\"]\ntransfer_sizes = [10]\ntransfer_round = 3\ntransfer_cc = [\"bbr\"]\n[remote]\nhost = \"h\"", "transfer_cc with a [remote] host"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(base, tc.from) {
				t.Fatalf("test spec has no %q", tc.from)
			}
			p := filepath.Join(t.TempDir(), "net.toml")
			os.WriteFile(p, []byte(strings.Replace(base, tc.from, tc.to, 1)), 0o644)
			_, err := LoadSpec(p)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one saying %q", err, tc.want)
			}
		})
	}
}

// The transfer block (our extension) is a block of its own: the rounds'
// series keep their IDs, seeds and offsets, the transfer series follow
// with seeds of their own, and the schedule starts them only after every
// round's series has ended.
func TestTransferBlock(t *testing.T) {
	s, err := LoadSpec("../../net.toml")
	if err != nil {
		t.Fatal(err)
	}
	full, err := s.Plan("full")
	if err != nil {
		t.Fatal(err)
	}
	rounds, xfer := full.Series(), full.TransferSeries()
	if want := 3 * 5 * 2 * 2; len(xfer) != want {
		t.Fatalf("%d transfer series, want %d (3 scenarios x 5 sizes x 2 congestion controls x 2 toolchains, the arms interleaved in each)", len(xfer), want)
	}
	seeds := map[uint64]string{}
	for _, r := range rounds {
		seeds[r.Link.Seed] = r.ID
		if r.ResponseBytes != 0 {
			t.Errorf("round series %s has a response size", r.ID)
		}
	}
	for _, x := range xfer {
		if id, ok := seeds[x.Link.Seed]; ok && !strings.HasPrefix(id, strings.TrimSuffix(x.ID, "-"+x.Toolchain)) {
			t.Errorf("transfer series %s shares its link seed with round series %s", x.ID, id)
		}
		if x.ResponseBytes < 0 || x.Round != full.TransferRound || len(x.Groups) != 3 || !x.Block {
			t.Errorf("%s: size %d round %d", x.ID, x.ResponseBytes, x.Round)
		}
	}
	if xfer[0].ID != "lan-0B-cubic-go1.24.4" {
		t.Errorf("first transfer series %s", xfer[0].ID)
	}
	e, err := Estimate(s, "full")
	if err != nil {
		t.Fatal(err)
	}
	var lastRound, firstXfer time.Duration = 0, 1 << 62
	for _, se := range e.Series {
		switch {
		case se.Control:
		case se.Block:
			firstXfer = min(firstXfer, se.Start)
		default:
			lastRound = max(lastRound, se.End)
		}
	}
	if firstXfer < lastRound {
		t.Errorf("a transfer series starts at %v, before the last round series ends at %v", firstXfer, lastRound)
	}
	// At most transfer_parallel transfer series at once in the plan.
	for _, a := range e.Series {
		if !a.Block {
			continue
		}
		n := 0
		for _, b := range e.Series {
			if b.Block && b.Start <= a.Start && a.Start < b.End {
				n++
			}
		}
		if n > full.TransferParallel {
			t.Errorf("%s starts with %d transfer series running, more than %d", a.ID, n, full.TransferParallel)
		}
	}
	if e.Expected > 90*time.Minute {
		t.Errorf("full profile expected %v, over the 90 min goal", e.Expected)
	}
	q, err := Estimate(s, "quick")
	if err != nil {
		t.Fatal(err)
	}
	if q.Expected > time.Minute {
		t.Errorf("quick profile expected %v, over 1 min", q.Expected)
	}
}

func TestRunNeedsRootFirst(t *testing.T) {
	// As root, pretend not to be: the check must come before anything
	// is created either way.
	saved := geteuid
	t.Cleanup(func() { geteuid = saved })
	geteuid = func() int { return 65534 }
	dir := t.TempDir()
	if _, err := Run(t.Context(), RunConfig{Config: runlife.Config{Root: dir, Profile: "quick"}}); err != ErrNeedRoot {
		t.Fatalf("error %v, want ErrNeedRoot", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("created %v before refusing", ents)
	}
}

// TestRunRefusesBadSpecBeforeCreating: a bad delay, and the padded arm
// without interleaving, stop Run before it creates anything.
func TestRunRefusesBadSpecBeforeCreating(t *testing.T) {
	needRoot(t)
	for _, tc := range []struct{ name, spec, want string }{
		{"delay", strings.Replace(tinySpec(0, "5000", "[10]"), "rtt_ms = 5.0", "rtt_ms = -1.0", 1), "delay"},
		{"padded arm serial", strings.Replace(tinySpec(0, "5000", "[3]"), "[runs]", "toolchains = [\"go1.27.3\"]\ntransfer_sizes = [0, 20000]\ntransfer_round = 4\ntransfer_padded_arm = true\n[runs]", 1), "transfer_padded_arm"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, _ := tree(t, tc.spec)
			if _, err := Run(t.Context(), cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one about %s", err, tc.want)
			}
			if _, err := os.Stat(filepath.Join(cfg.Root, "data")); err == nil {
				t.Error("data/ created for a spec that is invalid")
			}
			if l := leftovers(t); len(l) > 0 {
				t.Errorf("namespaces left: %v", l)
			}
		})
	}
}

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{os.ErrDeadlineExceeded, "timeout"},
		{&os.SyscallError{Syscall: "read", Err: errConnReset}, "reset"},
		{errPlain, ""},
	} {
		if got := classify(tc.err); got != tc.want {
			t.Errorf("classify(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}
