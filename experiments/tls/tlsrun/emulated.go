package tlsrun

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"maps"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"pqrepro/datasets/tlsdata"
	"pqrepro/experiments/instruments/capture"
	"pqrepro/experiments/instruments/handshake"
	"pqrepro/experiments/instruments/linkemu"
	"pqrepro/experiments/instruments/netns"
	"pqrepro/experiments/tls/openssl"
	"pqrepro/experiments/tls/tlsjoin"
)

// The emulated paths (issue 30): the openssl-cli stack with client and
// server in two namespaces joined by the user-space link emulator that
// Study B's links use too (experiments/instruments/linkemu) with a fixed
// one-way delay each way, one link per delay level, each self-tested
// before use. On them the run measures
// the paper's four configurations under every client group list and
// certificate chain of [emulated], the cells of the gap model
// (analysis/gapmodel). The model is a finding: the claims stay judged on
// the primary cell.

// EmulatedSpec is the [emulated] table: the factors of the emulated-path
// cells.
type EmulatedSpec struct {
	// DelaysMs are the one-way delays of the links (ms, each way).
	DelaysMs []float64 `toml:"delays_ms"`
	// ClientGroups are the client group-list modes
	// (tlsdata.ClientGroupModes).
	ClientGroups []string `toml:"client_groups"`
	// Chains are the certificate chains: ChainLeaf, ChainLeafCA.
	Chains []string `toml:"chains"`
	// SelfTestProbes is the number of UDP probes of each link's
	// self-test (linkemu.SelfTestConfig); 0 is 200.
	SelfTestProbes int `toml:"self_test_probes"`
	// ToleranceMs is how far the self-tested median RTT may be from the
	// configured one; 0 is linkemu.DefaultTolerance.
	ToleranceMs float64 `toml:"tolerance_ms"`
}

// Certificate chains of the emulated cells.
const (
	ChainLeaf   = "leaf"    // a self-signed leaf, the client's trust anchor
	ChainLeafCA = "leaf+ca" // the leaf and its CA certificate, same algorithm
)

// Limits of [emulated].
const (
	maxEmulatedDelayMs = 10 // one-way; the range is 0-2 ms
	minEmulatedLevels  = 3  // the registered split fits on two, holds out one
)

// EmulatedNetnsPrefix starts the names of the emulated paths' namespaces
// (linkemu.Options.Prefix): <prefix><pid>-<n>-{a,b}.
var EmulatedNetnsPrefix = "pqre-"

// emulatedDelays returns the one-way delays (ms) the profile runs on
// emulated paths: its emulated_delays_ms, else [emulated] delays_ms; none
// when the profile's emulated_n is 0.
func (s *Spec) emulatedDelays(profile string) []float64 {
	p, ok := s.Profiles[profile]
	if !ok || p.EmulatedN == 0 {
		return nil
	}
	if len(p.EmulatedDelaysMs) > 0 {
		return p.EmulatedDelaysMs
	}
	return s.Emulated.DelaysMs
}

// emulatedUnits are the profile's configurations on emulated paths. They are,
// per delay, client group list and chain, the paper's configurations on the
// openssl-cli stack with a direct key share.
func (s *Spec) emulatedUnits(profile string) []Config {
	var out []Config
	for _, d := range s.emulatedDelays(profile) {
		for _, mode := range s.Emulated.ClientGroups {
			for _, chain := range s.Emulated.Chains {
				for _, p := range s.Paper.Configs {
					key, _ := handshake.ParseCertKey(p.CertKey)
					g, _ := parseGroup(p.Group)
					c := Config{Key: key, Group: g, GroupName: g.String(), Chain: chain == ChainLeafCA, Stack: StackOpenSSLCLI, KeyShare: handshake.Direct,
						Path: tlsdata.EmulatedPath(d), ClientGroups: mode, Paper: p.Name, Baseline: p.Name == s.Paper.Baseline}
					c.Name = c.id()
					out = append(out, c)
				}
			}
		}
	}
	return out
}

// isEmulated says whether c runs on an emulated path.
func (c Config) isEmulated() bool {
	_, ok := tlsdata.ParseEmulatedPath(c.Path)
	return ok
}

// validateEmulated checks [emulated] and the profiles' emulated settings.
func (s *Spec) validateEmulated() []error {
	var errs []error
	e := s.Emulated
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	used := len(e.DelaysMs) > 0 || len(e.ClientGroups) > 0 || len(e.Chains) > 0
	for _, name := range slices.Sorted(maps.Keys(s.Profiles)) {
		p := s.Profiles[name]
		if p.EmulatedN < 0 || p.EmulatedN > maxN {
			bad("[profiles.%s] emulated_n = %d: must be 0 (no emulated cells) to %d", name, p.EmulatedN, maxN)
		}
		if p.EmulatedN > 0 {
			used = true
			if len(e.DelaysMs) == 0 {
				bad("[profiles.%s] emulated_n = %d but [emulated] names no delays_ms: add the table or set emulated_n = 0", name, p.EmulatedN)
			}
			if d := s.emulatedDelays(name); len(d) > 0 && len(d) < minEmulatedLevels {
				bad("[profiles.%s]: %d emulated delay level(s) %v: the gap model's registered split (analysis/gapmodel/registration.txt) needs at least %d, two fitted and one held out", name, len(d), d, minEmulatedLevels)
			}
		}
		errs = append(errs, checkDelays(fmt.Sprintf("[profiles.%s] emulated_delays_ms", name), p.EmulatedDelaysMs)...)
	}
	if !used {
		return errs
	}
	errs = append(errs, checkDelays("[emulated] delays_ms", e.DelaysMs)...)
	if len(e.ClientGroups) == 0 {
		bad("[emulated] client_groups: name at least one of %v", tlsdata.ClientGroupModes)
	}
	for i, m := range e.ClientGroups {
		if !slices.Contains(tlsdata.ClientGroupModes, m) {
			bad("[emulated] client_groups: unknown group list %q: use one of %v", m, tlsdata.ClientGroupModes)
		} else if slices.Index(e.ClientGroups, m) != i {
			bad("[emulated] client_groups: %s listed twice", m)
		}
	}
	if len(e.Chains) == 0 {
		bad("[emulated] chains: name at least one of %q, %q", ChainLeaf, ChainLeafCA)
	}
	for i, c := range e.Chains {
		if c != ChainLeaf && c != ChainLeafCA {
			bad("[emulated] chains: unknown chain %q: use %q (a self-signed leaf) or %q (leaf and CA)", c, ChainLeaf, ChainLeafCA)
		} else if slices.Index(e.Chains, c) != i {
			bad("[emulated] chains: %s listed twice", c)
		}
	}
	if e.SelfTestProbes < 0 || e.SelfTestProbes > 10_000 {
		bad("[emulated] self_test_probes = %d: want 0 (200) to 10000", e.SelfTestProbes)
	}
	if !(e.ToleranceMs >= 0 && e.ToleranceMs <= 5) {
		bad("[emulated] tolerance_ms = %v: want 0 (1 ms) to 5", e.ToleranceMs)
	}
	if !slices.Contains(s.stacks(), StackOpenSSLCLI) {
		bad("[emulated]: the emulated cells run the %s stack: add it to [matrix] stacks", StackOpenSSLCLI)
	}
	if len(s.Paper.Configs) == 0 {
		bad("[emulated]: the emulated cells run the paper's configurations: add [[paper.configs]]")
	}
	for _, p := range s.Paper.Configs {
		for _, m := range e.ClientGroups {
			if l := tlsdata.ClientGroupList(m); l != nil && !slices.Contains(l, p.Group) {
				bad("[emulated] client_groups: the list %s (%s) lacks %s, the group of %q: its handshakes would fail", m, strings.Join(l, ":"), p.Group, p.Name)
			}
		}
		if !slices.Contains([]string{string(handshake.Ed25519), string(handshake.MLDSA87)}, p.CertKey) && slices.Contains(e.Chains, ChainLeafCA) {
			bad("[emulated] chains: %q has certificate key %s; the leaf+ca chain is made for Ed25519 and ML-DSA-87 only", p.Name, p.CertKey)
		}
	}
	return errs
}

// checkDelays checks one list of one-way delays.
func checkDelays(where string, ds []float64) []error {
	var errs []error
	for i, d := range ds {
		switch {
		case math.IsNaN(d) || d < 0 || d > maxEmulatedDelayMs:
			errs = append(errs, fmt.Errorf("%s: %v ms: want a one-way delay from 0 to %d ms", where, d, maxEmulatedDelayMs))
		case d != math.Round(d*1000)/1000:
			errs = append(errs, fmt.Errorf("%s: %v ms: give the delay in whole microseconds (at most 3 decimals)", where, d))
		case slices.Index(ds, d) != i:
			errs = append(errs, fmt.Errorf("%s: %v ms listed twice", where, d))
		}
	}
	return errs
}

// clientGroupsArg is the s_client groups list of c: its own group (or the
// hrr decoy list) per-config, else its mode's one list.
func clientGroupsArg(c Config, decoy tls.CurveID) (string, error) {
	l := tlsdata.ClientGroupList(c.ClientGroups)
	if l == nil {
		return openssl.ClientGroups(c.Group, decoy), nil
	}
	gs := make([]tls.CurveID, len(l))
	for i, name := range l {
		g, err := handshake.ParseGroup(name)
		if err != nil {
			return "", fmt.Errorf("client group list %s: %w", c.ClientGroups, err)
		}
		gs[i] = g
	}
	return openssl.GroupList(gs), nil
}

// checkOfferedGroups fails, before any handshake, when the build's
// openssl program does not offer a group some s_server or s_client
// of the run would name.
func (k *cliStack) checkOfferedGroups(ctx context.Context, configs []Config) error {
	offered, err := openssl.TLSGroups(ctx, k.program)
	if err != nil {
		return fmt.Errorf("tls:run: the openssl-cli stack: %w", err)
	}
	var missing []string
	for _, c := range configs {
		if c.Stack != StackOpenSSLCLI || !c.isEmulated() {
			continue
		}
		list, err := clientGroupsArg(c, 0)
		if err != nil {
			return fmt.Errorf("tls:run: %s: %w", c.Name, err)
		}
		for _, g := range openssl.MissingGroups(list+":"+openssl.ServerGroups(c.Group), offered) {
			if !slices.Contains(missing, g) {
				missing = append(missing, g)
			}
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("tls:run: the openssl program (%s) does not offer the group(s) %s that [emulated] client_groups or [[paper.configs]] name (it offers %s): fix the spec, or rebuild OpenSSL (go run mage.go tls:openssl); no handshake was made",
			k.version, strings.Join(missing, ", "), strings.Join(offered, ":"))
	}
	return nil
}

// checkCertFiles fails when a PEM file a configuration needs is missing:
// the CA file of a chain above all, which s_client and -cert_chain read.
func checkCertFiles(c Config, files openssl.CertFiles) error {
	for _, f := range []string{files.Chain, files.Key, files.CA} {
		if _, err := os.Stat(f); err != nil {
			return fmt.Errorf("%s: certificate file missing (%w): the run writes it from the deterministic certificates; check the run's temporary folder is writable and not cleaned during the run", c.Name, err)
		}
	}
	return nil
}

// startLink starts and self-tests one link; tests replace it.
var startLink = linkemu.StartVerified

// emulatedPath is one emulated path: a link of one delay, its
// namespaces' threads, and its self-test.
type emulatedPath struct {
	logger
	pathName string
	delayMs  float64
	link     *linkemu.Link
	cli, srv *netns.Thread
	report   linkemu.SelfTestReport
}

// startEmulated starts and self-tests the link of every emulated path the
// run's configurations name, and records its RTT in them. A link that
// fails its self-test twice is an error: its cells are not measured.
func (r *runner) startEmulated(ctx context.Context) error {
	var names []string
	for _, c := range r.configs {
		if c.isEmulated() && !slices.Contains(names, c.Path) {
			names = append(names, c.Path)
		}
	}
	for _, name := range names {
		p, err := r.startEmulatedPath(ctx, name)
		if err != nil {
			return err
		}
		r.paths = append(r.paths, p)
		rtt := int64(math.Round(p.report.P50Ms * 1e6))
		for i := range r.configs {
			if r.configs[i].Path == name {
				r.configs[i].LinkRTTNs = rtt
			}
		}
	}
	return nil
}

func (r *runner) startEmulatedPath(ctx context.Context, name string) (*emulatedPath, error) {
	d, _ := tlsdata.ParseEmulatedPath(name)
	delay := time.Duration(math.Round(d * 1e6))
	sc := linkemu.Symmetric(name, linkemu.Direction{Delay: delay, Rate: linkemu.Unlimited}, r.spec.Seeds.Order)
	stc := linkemu.SelfTestConfig{Probes: r.spec.Emulated.SelfTestProbes, Tolerance: time.Duration(r.spec.Emulated.ToleranceMs * 1e6)}
	var link *linkemu.Link
	var rep linkemu.SelfTestReport
	var err error
	for attempt := 1; attempt <= 2; attempt++ {
		link, rep, err = startLink(ctx, sc, linkemu.Options{Prefix: EmulatedNetnsPrefix}, stc)
		var ae *linkemu.AccuracyError
		if err == nil || !errors.As(err, &ae) || ctx.Err() != nil {
			break
		}
		if attempt == 1 {
			r.logf("emulated path %s: the self-test missed (%v); testing a fresh link once more", name, err)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("tls:run: emulated path %s: %w; its cells are not measured and nothing was recorded: run again on a quieter machine, or widen [emulated] tolerance_ms if the machine cannot do better", name, err)
	}
	p := &emulatedPath{logger: r.logger, pathName: name, delayMs: d, link: link, report: rep}
	if p.cli, err = netns.NewThread(link.Endpoint(linkemu.A).Path); err == nil {
		p.srv, err = netns.NewThread(link.Endpoint(linkemu.B).Path)
	}
	if err != nil {
		p.close()
		return nil, fmt.Errorf("tls:run: emulated path %s: %w", name, err)
	}
	r.logf("emulated path %s: namespaces %s and %s, self-test RTT p50 %.3f ms (configured %.3f, error %+.3f ms)",
		name, link.Endpoint(linkemu.A).Namespace, link.Endpoint(linkemu.B).Namespace, rep.P50Ms, rep.ExpectedRTTms, rep.ErrorP50Ms)
	return p, nil
}

func (p *emulatedPath) name() string       { return p.pathName }
func (p *emulatedPath) serverAddr() string { return p.link.Endpoint(linkemu.B).Addr.String() }

// client runs f on a thread in the client's namespace.
func (p *emulatedPath) client(f func()) { p.cli.Do(f) }

// listen reserves a port on the server's side of the link.
func (p *emulatedPath) listen(Config) (ln net.Listener, err error) {
	p.srv.Do(func() { ln, err = net.Listen("tcp", net.JoinHostPort(p.serverAddr(), "0")) })
	return ln, err
}

// launchers start s_server on the server namespace's thread and s_client
// (in dial) on the client's, so each process is born in its namespace.
func (p *emulatedPath) launchers(native openssl.Launcher) (server, client openssl.Launcher, bindIP string) {
	server = native
	server.Start = func(cmd *exec.Cmd) (err error) {
		p.srv.Do(func() { err = cmd.Start() })
		return err
	}
	server.Listening = func(addr string) (up bool, err error) {
		p.srv.Do(func() { up, err = openssl.ListeningTCP(addr) })
		return up, err
	}
	return server, native, p.link.Endpoint(linkemu.A).Addr.String()
}

// capture captures the client's TUN device inside its namespace. A TUN
// device sees every packet once, so outgoing packets are kept.
func (p *emulatedPath) capture(ctx context.Context, dir string, _ []*server) (*pathCapture, error) {
	return p.captureEnd(ctx, dir, linkemu.A, p.cli, tlsjoin.CaptureFor(p.pathName))
}

// serverCapture captures the server's TUN device inside its namespace:
// the same connections as they arrive at and leave the server (issue 42).
func (p *emulatedPath) serverCapture(ctx context.Context, dir string) (*pathCapture, error) {
	pc, err := p.captureEnd(ctx, dir, linkemu.B, p.srv, tlsjoin.ServerCaptureFor(p.pathName))
	if pc != nil {
		pc.serverEnd = true
	}
	return pc, err
}

// captureEnd captures endpoint end's TUN device from thread t, in its
// namespace, into dir/name.
func (p *emulatedPath) captureEnd(ctx context.Context, dir string, end linkemu.Side, t *netns.Thread, name string) (*pathCapture, error) {
	iface := p.link.Endpoint(end).Iface
	pc := &pathCapture{path: p.pathName, iface: iface, name: name, file: filepath.Join(dir, name)}
	keep := false
	var err error
	t.Do(func() {
		pc.c, err = capture.Start(ctx, capture.Options{Interface: iface, Path: pc.file, DropOutgoing: &keep})
	})
	if err != nil {
		return nil, fmt.Errorf("tls:run: emulated path %s: %s: %w", p.pathName, name, err)
	}
	return pc, nil
}

func (p *emulatedPath) done() <-chan struct{} { return p.link.Done() }

// failure is the link's error when the emulator stopped by itself.
func (p *emulatedPath) failure(error) error {
	if err := p.link.Err(); err != nil {
		return fmt.Errorf("emulated path %s: the link emulator stopped mid-run: %w; the run was removed and its namespaces are being removed", p.pathName, err)
	}
	return nil
}

// info is measured.paths.<name>: the link and its self-test.
func (p *emulatedPath) info() map[string]any {
	a, b := p.link.Endpoint(linkemu.A), p.link.Endpoint(linkemu.B)
	return map[string]any{
		"path": p.pathName, "interface": a.Iface, "namespaces": []string{a.Namespace, b.Namespace},
		"one_way_delay_ms": p.delayMs, "scenario": p.link.Scenario(), "self_test": p.report,
		"client_addr": a.Addr.String(), "server_addr": b.Addr.String(),
	}
}

// close ends the threads and removes the link's namespaces and devices.
func (p *emulatedPath) close() {
	for _, t := range []*netns.Thread{p.cli, p.srv} {
		if t != nil {
			t.Close()
		}
	}
	p.cli, p.srv = nil, nil
	if p.link == nil {
		return
	}
	if err := p.link.Close(); err != nil && !errors.Is(err, linkemu.ErrClosed) {
		p.logf("WARNING: emulated path %s: %v", p.pathName, err)
		return
	}
	p.vlogf("emulated path %s: namespaces and devices removed", p.pathName)
}
