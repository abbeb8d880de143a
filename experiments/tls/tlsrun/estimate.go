package tlsrun

import (
	"crypto/tls"
	"path/filepath"
	"slices"
	"time"

	"pqrepro/datasets/tlsdata"
	"pqrepro/experiments/instruments/handshake"
	"pqrepro/internal/spec"
)

// Cost model of one connection on the reference machine, for the plan's
// estimate only.
//
// The machine has 2 cores shared with other work (AMD EPYC, Go 1.27.3).
// The figures are fitted to the medians of a quick
// run while capturing (client timer of each configuration): a base cost
// for TCP, the record layer, Ed25519 + X25519 and the gap between
// connections, plus the certificate key's and the group's extra over
// Ed25519 and X25519. ML-DSA signing and the P-384 half of the hybrid
// dominate. The figures are rough (other load on the machine changes them
// by tens of percent); they serve the plan's estimate only.
var (
	costBase = 1150 * time.Microsecond
	costKey  = map[handshake.CertKey]time.Duration{
		handshake.Ed25519:   0,
		handshake.ECDSAP256: 10 * time.Microsecond,
		handshake.MLDSA44:   630 * time.Microsecond,
		handshake.MLDSA65:   1040 * time.Microsecond,
		handshake.MLDSA87:   1430 * time.Microsecond,
	}
	costGroup = map[tls.CurveID]time.Duration{
		tls.X25519:             0,
		tls.X25519MLKEM768:     250 * time.Microsecond,
		tls.SecP256r1MLKEM768:  400 * time.Microsecond,
		tls.MLKEM1024:          170 * time.Microsecond,
		tls.SecP384r1MLKEM1024: 2080 * time.Microsecond,
	}
	// costChain is the extra CA certificate: one more signature to verify
	// on the client (the CA's signature on the leaf).
	costChain = 400 * time.Microsecond
	// costRead is reading the capture back and joining, per connection.
	costRead = 100 * time.Microsecond
	// costBridge is the bridge path's extra cost per connection and
	// costBridgeSetup its namespaces'. The extra is veth, bridge and
	// MTU-sized segments instead of lo's 64 KiB ones (see BenchmarkPaths).
	costBridge      = 300 * time.Microsecond
	costBridgeSetup = 300 * time.Millisecond
	// costCLI is the openssl-cli stack's extra cost per connection. A new
	// s_client process (fork, exec, the program's start, the providers'
	// first fetches, its exit) and the port probe; costDocker the docker
	// path's extra over the bridge's, costDockerSetup its daemon, image
	// and containers (dockernet.Start and Close); see BenchmarkCLI.
	costCLI         = 5 * time.Millisecond
	costDocker      = 300 * time.Microsecond
	costDockerSetup = 15 * time.Second
	// costEmulatedSetup is starting and self-testing one emulated link
	// (200 probes 2 ms apart, the namespaces and TUN devices).
	// costEmulated is the user-space forwarder's own delay per connection.
	// An emulated connection also waits (2.5 + HRR) round trips of its
	// link: the TCP handshake, the TLS round trips before the client's
	// Finished, and half of one until s_server has printed its summary.
	costEmulatedSetup = 1500 * time.Millisecond
	costEmulated      = 600 * time.Microsecond
	// costHost is measuring the host's cryptography twice
	// (openssl.MeasureHost: 13 operations of 6 primitives, one second each).
	costHost = 2 * 13 * time.Second
	// costFixed is certificates, servers, provenance and the store.
	costFixed = 500 * time.Millisecond
)

// Estimate returns the expected wall time of Run for the profile, from
// the plan's connection count per configuration and the cost model above.
func Estimate(s *Spec, profile string) (time.Duration, error) {
	plan, err := Plan(s, profile)
	if err != nil {
		return 0, err
	}
	cfgs := s.Units(profile)
	per := make([]time.Duration, len(cfgs))
	d := costFixed
	for i, c := range cfgs {
		per[i] = costBase + costKey[c.Key] + costGroup[c.Group] + costRead
		if c.Chain {
			per[i] += costChain
		}
		if c.Path == PathBridge || c.Path == PathDocker {
			per[i] += costBridge
		}
		if c.Path == PathDocker {
			per[i] += costDocker
		}
		if c.Stack == StackOpenSSLCLI {
			per[i] += costCLI
		}
		if d, ok := tlsdata.ParseEmulatedPath(c.Path); ok {
			rts := 2.5
			if tlsdata.ExpectHRR(c.ClientGroups, c.Group.String()) {
				rts++
			}
			per[i] += costEmulated + time.Duration(rts*2*d*float64(time.Millisecond))
		}
	}
	d += time.Duration(len(s.emulatedDelays(profile))) * costEmulatedSetup
	if hasPath(cfgs, PathBridge) {
		d += costBridgeSetup
	}
	if hasPath(cfgs, PathDocker) {
		d += costDockerSetup
	}
	if slices.ContainsFunc(cfgs, func(c Config) bool { return usesOpenSSL(c.Stack) }) {
		d += costHost
	}
	for _, st := range plan {
		d += per[st.Config]
	}
	return d, nil
}

// Estimates returns Estimate for every profile of the spec under root
// (experiments/tls.toml), or nil when the spec cannot be read: the shape
// of pipeline.Study.Estimate.
func Estimates(root string) map[string]time.Duration {
	s, err := LoadSpec(filepath.Join(root, spec.Path(Study)))
	if err != nil {
		return nil
	}
	out := map[string]time.Duration{}
	for name := range s.Profiles {
		if d, err := Estimate(s, name); err == nil {
			out[name] = d
		}
	}
	return out
}
