package tlsrun

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"pqrepro/datasets/tlsdata"
	"pqrepro/experiments/instruments/handshake"
	"pqrepro/experiments/instruments/linkemu"
	"pqrepro/experiments/instruments/rederive"
	"pqrepro/experiments/tls/openssl"
	"pqrepro/experiments/tls/tlsjoin"
)

// emulatedTable is an [emulated] table of three levels, two group lists
// and both chains.
const emulatedTable = `
[emulated]
delays_ms = [0.0, 0.5, 1.0]
client_groups = ["per-config", "x25519-first"]
chains = ["leaf", "leaf+ca"]
self_test_probes = 50
`

// emulatedSpec is tinySpec's two paper configurations on the openssl-cli
// stack on loopback, and on the emulated paths of emulatedTable with
// emulated_n connections each.
func emulatedSpec(emulatedN int) string {
	s := strings.Replace(tinySpec, `cert_keys = ["ed25519"]`, "cert_keys = [\"ed25519\"]\nstacks = [\"openssl-cli\"]", 1)
	s = strings.Replace(s, "warmup = 1\n", fmt.Sprintf("warmup = 1\nemulated_n = %d\n", emulatedN), 1)
	return strings.Replace(s, "[runs]", cliTable+emulatedTable+"\n[runs]", 1)
}

func TestEmulatedUnits(t *testing.T) {
	dir := t.TempDir()
	s, err := LoadSpec(writeSpec(t, dir, emulatedSpec(3)))
	if err != nil {
		t.Fatal(err)
	}
	var emu []Config
	names := map[string]bool{}
	for _, c := range s.Units("quick") {
		if names[c.Name+" on "+c.pathName()] {
			t.Errorf("unit %s on %s twice", c.Name, c.pathName())
		}
		names[c.Name+" on "+c.pathName()] = true
		if c.isEmulated() {
			emu = append(emu, c)
		}
	}
	// 3 levels x 2 lists x 2 chains x 2 paper configurations.
	if len(emu) != 24 {
		t.Fatalf("%d emulated units, want 24", len(emu))
	}
	for _, c := range emu {
		id, err := tlsdata.ParseConfigID(c.Name)
		if err != nil || id.GroupsName() != c.ClientGroups || id.Chain != c.Chain || c.Stack != StackOpenSSLCLI || c.KeyShare != handshake.Direct {
			t.Errorf("unit %+v: ID %+v, %v", c, id, err)
		}
	}
	plan, err := Plan(s, "quick")
	if err != nil {
		t.Fatal(err)
	}
	per := map[int]int{}
	units := s.Units("quick")
	for _, st := range plan {
		if units[st.Config].isEmulated() && !st.Warmup {
			per[st.Config]++
		}
	}
	for i, n := range per {
		if n != 3 {
			t.Errorf("%s on %s: %d measured connections, want emulated_n = 3", units[i].Name, units[i].Path, n)
		}
	}
	// emulated_n = 0 runs none.
	s.Profiles["quick"] = Profile{N: 5, Block: 2, Warmup: 1}
	for _, c := range s.Units("quick") {
		if c.isEmulated() {
			t.Fatalf("emulated unit %s with emulated_n = 0", c.Name)
		}
	}
	if d, err := Estimate(s, "quick"); err != nil || d <= 0 {
		t.Errorf("Estimate: %v, %v", d, err)
	}
}

// TestEmulatedSpecErrors: every bad [emulated] input is a clear error
// before anything runs.
func TestEmulatedSpecErrors(t *testing.T) {
	for _, tc := range []struct {
		name, from, to, want string
	}{
		{"negative delay", "delays_ms = [0.0, 0.5, 1.0]", "delays_ms = [-1.0, 0.5, 1.0]", "-1 ms: want a one-way delay from 0 to 10 ms"},
		{"huge delay", "delays_ms = [0.0, 0.5, 1.0]", "delays_ms = [0.0, 0.5, 1000.0]", "1000 ms: want a one-way delay"},
		{"sub-microsecond delay", "delays_ms = [0.0, 0.5, 1.0]", "delays_ms = [0.0, 0.5, 1.0001]", "whole microseconds"},
		{"delay twice", "delays_ms = [0.0, 0.5, 1.0]", "delays_ms = [0.0, 0.5, 0.5]", "0.5 ms listed twice"},
		{"two levels", "delays_ms = [0.0, 0.5, 1.0]", "delays_ms = [0.0, 2.0]", "needs at least 3"},
		{"unknown group list", `client_groups = ["per-config", "x25519-first"]`, `client_groups = ["per-config", "all-groups"]`, `unknown group list "all-groups"`},
		{"no group list", `client_groups = ["per-config", "x25519-first"]`, `client_groups = []`, "name at least one"},
		{"unknown chain", `chains = ["leaf", "leaf+ca"]`, `chains = ["leaf", "full"]`, `unknown chain "full"`},
		{"emulated_n without delays", "delays_ms = [0.0, 0.5, 1.0]\n", "", "names no delays_ms"},
		{"no cli stack", `stacks = ["openssl-cli"]`, `stacks = ["go"]`, "add it to [matrix] stacks"},
		{"unknown key", "self_test_probes = 50", "self_test_probe = 50", "self_test_probe"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := emulatedSpec(3)
			if !strings.Contains(body, tc.from) {
				t.Fatalf("spec lacks %q", tc.from)
			}
			_, err := LoadSpec(writeSpec(t, t.TempDir(), strings.Replace(body, tc.from, tc.to, 1)))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

// TestEmulatedSelfTestFails: a link that misses its self-test twice stops
// the run before any handshake, with an error saying what to do; a miss
// then a pass runs.
func TestEmulatedSelfTestFails(t *testing.T) {
	s, err := LoadSpec(writeSpec(t, t.TempDir(), emulatedSpec(3)))
	if err != nil {
		t.Fatal(err)
	}
	old := startLink
	t.Cleanup(func() { startLink = old })
	calls := 0
	startLink = func(ctx context.Context, sc linkemu.Scenario, o linkemu.Options, c linkemu.SelfTestConfig) (*linkemu.Link, linkemu.SelfTestReport, error) {
		calls++
		rep := linkemu.SelfTestReport{Scenario: sc.Name, ExpectedRTTms: 1, P50Ms: 3.5, ToleranceMs: 1, Problems: []string{"p50 2.5 ms off"}}
		if c.Probes != 50 || sc.AtoB.Delay != 500*time.Microsecond && sc.AtoB.Delay != 0 && sc.AtoB.Delay != time.Millisecond {
			t.Errorf("self-test %+v of scenario %+v", c, sc)
		}
		return nil, rep, &linkemu.AccuracyError{Report: rep}
	}
	var log strings.Builder
	r := &runner{logger: logger{w: &log}, spec: s, configs: s.Units("quick")}
	err = r.startEmulated(context.Background())
	if err == nil || !strings.Contains(err.Error(), "self-test") || !strings.Contains(err.Error(), "its cells are not measured") || !strings.Contains(err.Error(), "quieter machine") {
		t.Fatalf("err = %v", err)
	}
	var ae *linkemu.AccuracyError
	if !errors.As(err, &ae) || calls != 2 || len(r.paths) != 0 {
		t.Errorf("calls %d, paths %d, AccuracyError %v", calls, len(r.paths), errors.As(err, &ae))
	}
	if !strings.Contains(log.String(), "testing a fresh link once more") {
		t.Errorf("log: %s", log.String())
	}
}

// TestEmulatedCertFiles: a missing CA file is an error before its server
// starts.
func TestEmulatedCertFiles(t *testing.T) {
	dir := t.TempDir()
	b, err := handshake.MakeCerts(handshake.CertConfig{Key: handshake.MLDSA87, Chain: true, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	files, err := openssl.WriteCerts(dir, b)
	if err != nil {
		t.Fatal(err)
	}
	c := Config{Name: "mldsa87/X25519/chain/openssl-cli/groups-x25519-first"}
	if err := checkCertFiles(c, files); err != nil {
		t.Fatal(err)
	}
	os.Remove(files.CA)
	if err := checkCertFiles(c, files); err == nil || !strings.Contains(err.Error(), "certificate file missing") || !strings.Contains(err.Error(), "ca.pem") {
		t.Fatalf("err = %v", err)
	}
}

// TestEmulatedGroupsOffered: a group the openssl program does not offer
// is an error before any handshake, naming it.
func TestEmulatedGroupsOffered(t *testing.T) {
	s, err := LoadSpec(writeSpec(t, t.TempDir(), emulatedSpec(3)))
	if err != nil {
		t.Fatal(err)
	}
	prog := filepath.Join(t.TempDir(), "openssl")
	script := "#!/bin/sh\necho secp256r1:x25519:X25519MLKEM768:SecP384r1MLKEM1024\n"
	if err := os.WriteFile(prog, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	k := &cliStack{program: prog, version: "OpenSSL test"}
	err = k.checkOfferedGroups(context.Background(), s.Units("quick"))
	if err == nil || !strings.Contains(err.Error(), "does not offer the group(s) MLKEM1024") || !strings.Contains(err.Error(), "no handshake was made") {
		t.Fatalf("err = %v", err)
	}
	os.WriteFile(prog, []byte("#!/bin/sh\necho secp256r1:x25519:MLKEM1024:SecP384r1MLKEM1024\n"), 0o755)
	if err := k.checkOfferedGroups(context.Background(), s.Units("quick")); err != nil {
		t.Fatal(err)
	}
}

// emulatedNamespaces lists this process's emulated-path namespaces.
func emulatedNamespaces(t *testing.T) []string {
	t.Helper()
	l, _ := linkemu.ListNamespaces("", fmt.Sprintf("%s%d-", EmulatedNetnsPrefix, os.Getpid()))
	return l
}

// needEmulated skips unless the run can build links and has the OpenSSL
// build; it returns the build's root.
func needEmulated(t *testing.T) string {
	t.Helper()
	needRoot(t)
	if _, err := os.Stat(linkemu.DefaultTunPath); err != nil {
		t.Skipf("skipped: the emulated path needs a TUN device (%v)", err)
	}
	root, _ := filepath.Abs("../../..")
	if _, err := openssl.Cached(root); err != nil {
		t.Skipf("skipped: the OpenSSL build is not in the cache (go run mage.go tls:openssl makes it once): %v", err)
	}
	old := EmulatedNetnsPrefix
	EmulatedNetnsPrefix = "pqret-"
	t.Cleanup(func() { EmulatedNetnsPrefix = old })
	return root
}

// TestRunEmulated records a few handshakes on three emulated links: every
// connection's HRR is the one its group list predicts, its round trips
// are counted from the capture (1 direct, 2 after an HRR), and its
// record carries the link's self-tested RTT; nothing is left behind.
func TestRunEmulated(t *testing.T) {
	root := needEmulated(t)
	e := newEnv(t, emulatedSpec(3))
	cfg := e.config(time.Date(2026, 12, 6, 14, 0, 0, 0, time.UTC))
	cfg.BuildRoot = root
	res, err := Run(context.Background(), cfg)
	if l := emulatedNamespaces(t); len(l) > 0 {
		t.Errorf("namespaces left behind: %v", l)
	}
	if err != nil {
		t.Fatalf("%v\nlog:\n%s", err, e.log.String())
	}
	recs := readRunRecords(t, res.Dir)
	emu := 0
	for _, r := range recs {
		d, ok := tlsdata.ParseEmulatedPath(r.Path)
		if !ok {
			continue
		}
		emu++
		want := int64(1)
		if tlsdata.ExpectHRR(r.ClientGroupsName(), r.Group) {
			want = 2
		}
		if r.HRR != (want == 2) || r.RoundTrips == nil || *r.RoundTrips < want || r.LinkRTTNs == nil {
			t.Errorf("seq %d %s on %s: hrr %v round trips %v rtt %v", r.Seq, r.Config, r.Path, r.HRR, r.RoundTrips, r.LinkRTTNs)
			continue
		}
		if rtt := float64(*r.LinkRTTNs) / 1e6; rtt < 2*d || rtt > 2*d+1 {
			t.Errorf("%s: link RTT %.3f ms for %v ms one way", r.Path, rtt, d)
		}
		if !r.Warmup {
			t.Logf("%-16s %-58s hrr %-5v round trips %d, Ths %.3f ms", r.Path, r.Config, r.HRR, *r.RoundTrips, float64(*r.ThsNs)/1e6)
		}
	}
	// 24 configurations x 3 rounds x (1 warm-up + 1).
	if emu != 144 {
		t.Errorf("%d emulated records, want 144", emu)
	}
	checkServerEnd(t, res.Dir, recs)
	checkOneEnd(t, e, res.Dir, recs)
}

// runCaptures is a run's meta.json and the captures it names.
func runCaptures(t *testing.T, dir string) ([]byte, []rederive.Capture) {
	t.Helper()
	meta, err := os.ReadFile(filepath.Join(dir, rederive.MetaFile))
	if err != nil {
		t.Fatal(err)
	}
	caps, err := rederive.Captures(meta)
	if err != nil {
		t.Fatal(err)
	}
	return meta, caps
}

// checkOneEnd re-derives a run the way the build's tls:records stage
// does, with and without its server-end captures. With every capture it
// gets the recorded bytes; without (a run before issue 42), the
// ColumnsEmulated header and the same records less their server-end times.
func checkOneEnd(t *testing.T, e *testEnv, dir string, recs []tlsdata.Record) {
	t.Helper()
	_, caps := runCaptures(t, dir)
	read := func(name string) ([]byte, error) { return os.ReadFile(filepath.Join(dir, name)) }
	open := func(c rederive.Capture) (io.ReadCloser, error) {
		p := filepath.Join(dir, c.Name+rederive.GzipExt)
		if _, err := os.Stat(p); err != nil {
			p = e.store.Path(c.SHA256)
		}
		return rederive.OpenFile(p, c.SHA256)
	}
	recorded, err := read(tlsdata.RecordsFile)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := tlsjoin.Derive(context.Background(), dir, read, open, caps); err != nil || !bytes.Equal(b, recorded) {
		t.Fatalf("re-derived with every capture: %v, equal %v", err, bytes.Equal(b, recorded))
	}
	oneEnd := slices.DeleteFunc(slices.Clone(caps), func(c rederive.Capture) bool { return strings.HasSuffix(c.Name, "-server"+rederive.CaptureExt) })
	if len(oneEnd) == len(caps) {
		t.Fatal("no server-end capture in meta.json")
	}
	b, err := tlsjoin.Derive(context.Background(), dir, read, open, oneEnd)
	if err != nil {
		t.Fatal(err)
	}
	got, err := tlsdata.ReadRecords(bytes.NewReader(b), "one-end")
	if err != nil {
		t.Fatal(err)
	}
	want := slices.Clone(recs)
	for i := range want {
		r := &want[i]
		r.ClientHello2Ns, r.SrvSynNs, r.SrvClientHelloNs, r.SrvClientHello2Ns, r.SrvServerFlightEndNs, r.SrvClientFinishedNs = nil, nil, nil, nil, nil, nil
	}
	want2, err := tlsdata.MarshalRecords(want)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, want2) || len(got) != len(recs) {
		t.Error("without the server-end captures: not the run's records less their server-end times under ColumnsEmulated")
	}
}

// checkServerEnd checks a run's server-end captures (issue 42) and logs
// each cell's medians. meta.json names one per emulated path; every
// emulated connection is in it with each time on the right side of its
// client-end time (a packet arrives after it left), the HRR ones with
// both second ClientHellos; other paths' records have none; and the
// ClientHello's median trip over each link is its one-way delay.
func checkServerEnd(t *testing.T, dir string, recs []tlsdata.Record) {
	t.Helper()
	meta, caps := runCaptures(t, dir)
	var m struct {
		Measured struct {
			Paths map[string]struct {
				ServerCapture *struct {
					Capture string                  `json:"capture"`
					Join    *tlsjoin.ServerEndStats `json:"join"`
				} `json:"server_capture"`
			} `json:"paths"`
		} `json:"measured"`
	}
	if err := json.Unmarshal(meta, &m); err != nil {
		t.Fatal(err)
	}
	perPath := map[string]int{}
	for _, r := range recs {
		if _, emu := tlsdata.ParseEmulatedPath(r.Path); emu {
			perPath[r.Path]++
		}
	}
	for p, n := range perPath {
		sc := m.Measured.Paths[p].ServerCapture
		if sc == nil || sc.Capture != tlsjoin.ServerCaptureFor(p) || sc.Join == nil || sc.Join.Joined != n || sc.Join.Missing != 0 {
			t.Errorf("meta.json measured.paths.%s.server_capture: %+v, want %d connections joined", p, sc, n)
		}
	}
	type cell struct{ path, config string }
	deltas := map[cell][][]float64{} // per cell, per quantity: ms
	trip := map[string][]float64{}
	ms := func(a, b *int64) float64 { return float64(*a-*b) / 1e6 }
	for _, r := range recs {
		d, emu := tlsdata.ParseEmulatedPath(r.Path)
		if !emu {
			if r.SrvClientHelloNs != nil || r.ClientHello2Ns != nil {
				t.Errorf("seq %d on %s has server-end times", r.Seq, r.Path)
			}
			continue
		}
		if !slices.ContainsFunc(caps, func(c rederive.Capture) bool { return c.Name == tlsjoin.ServerCaptureFor(r.Path) }) {
			t.Fatalf("meta.json names no %s: %v", tlsjoin.ServerCaptureFor(r.Path), caps)
		}
		if r.SrvSynNs == nil || r.SrvClientHelloNs == nil || r.SrvServerFlightEndNs == nil || r.SrvClientFinishedNs == nil ||
			r.HRR != (r.ClientHello2Ns != nil) || r.HRR != (r.SrvClientHello2Ns != nil) {
			t.Errorf("seq %d %s on %s: server end missing or second ClientHello wrong (hrr %v)", r.Seq, r.Config, r.Path, r.HRR)
			continue
		}
		q := []float64{ms(r.SrvSynNs, r.SynNs), ms(r.SrvClientHelloNs, r.ClientHelloNs), ms(r.ServerFlightEndNs, r.SrvServerFlightEndNs), ms(r.SrvClientFinishedNs, r.ClientFinishedNs)}
		if r.HRR {
			q = append(q, ms(r.SrvClientHello2Ns, r.ClientHello2Ns), ms(r.ClientHello2Ns, r.ClientHelloNs))
		}
		if slices.Min(q[:min(len(q), 5)]) < 0 {
			t.Errorf("seq %d %s on %s: a packet arrives before it left (ms: syn, ch, flight end, finished, ch2: %v)", r.Seq, r.Config, r.Path, q)
		}
		trip[r.Path] = append(trip[r.Path], q[1]-d)
		if !r.Warmup {
			k := cell{r.Path, r.Config}
			for i, v := range q {
				for len(deltas[k]) <= i {
					deltas[k] = append(deltas[k], nil)
				}
				deltas[k][i] = append(deltas[k][i], v)
			}
		}
	}
	for p, ex := range trip {
		if m := median(ex); m < 0 || m > 0.5 {
			t.Errorf("%s: the ClientHello's median trip is %.3f ms beyond the one-way delay", p, m)
		}
	}
	for _, k := range slices.SortedFunc(maps.Keys(deltas), func(a, b cell) int { return cmp.Or(cmp.Compare(a.path, b.path), cmp.Compare(a.config, b.config)) }) {
		var b strings.Builder
		for i, name := range []string{"srv_syn-syn", "srv_ch-ch", "sfe-srv_sfe", "srv_cf-cf", "srv_ch2-ch2", "ch2-ch"} {
			if i < len(deltas[k]) {
				fmt.Fprintf(&b, " %s %.3f", name, median(deltas[k][i]))
			}
		}
		t.Logf("%-16s %-58s medians (ms):%s", k.path, k.config, b.String())
	}
}

// median of xs (not empty); xs is sorted in place.
func median(xs []float64) float64 {
	slices.Sort(xs)
	n := len(xs)
	return (xs[(n-1)/2] + xs[n/2]) / 2
}

// TestRunEmulatedCancelled cancels a run while its links come up and
// while it connects: an interruption that leaves no namespace behind.
func TestRunEmulatedCancelled(t *testing.T) {
	root := needEmulated(t)
	for i, after := range []time.Duration{50 * time.Millisecond, 400 * time.Millisecond, 1500 * time.Millisecond} {
		t.Run(fmt.Sprint(after), func(t *testing.T) {
			e := newEnv(t, emulatedSpec(30))
			cfg := e.config(time.Date(2026, 12, 6, 14, 1, i, 0, time.UTC))
			cfg.BuildRoot = root
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(after, cancel)
			defer cancel()
			_, err := Run(ctx, cfg)
			if l := emulatedNamespaces(t); len(l) > 0 {
				t.Errorf("namespaces left behind: %v", l)
			}
			if err == nil {
				t.Skip("the run finished before the cancel")
			}
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v, want the cancellation\nlog:\n%s", err, e.log.String())
			}
			if ents, _ := os.ReadDir(filepath.Join(e.root, "data", "tls")); len(ents) > 0 {
				t.Errorf("data/tls holds %v after the cancel", ents)
			}
		})
	}
}
