package tlsrun

import (
	"crypto/tls"
	"testing"

	"pqrepro/experiments/instruments/handshake"
)

func startFixture(keys ...handshake.CertKey) *runner {
	r := &runner{spec: &Spec{}}
	for i, k := range keys {
		r.configs = append(r.configs, Config{Name: string(k) + "/X25519", Key: k, Group: tls.X25519, GroupName: "X25519",
			Stack: StackGo, KeyShare: handshake.Direct, Path: PathLoopback, Baseline: i == 0})
	}
	return r
}

// TestStartServersReservesEveryPortFirst: no server starts before every
// configuration's port is reserved. An openssl-cli server closes its
// reserved listener for s_server to bind, and a reservation made after
// that could be handed the freed port (s_server: "BIO_bind: Address
// already in use" in a quick run on the docker path).
func TestStartServersReservesEveryPortFirst(t *testing.T) {
	r := startFixture(handshake.Ed25519, handshake.Ed25519, handshake.Ed25519)
	reservedAtFirst, starts := -1, 0
	testHookServeStart = func() {
		if starts == 0 {
			reservedAtFirst = len(r.servers)
		}
		starts++
	}
	t.Cleanup(func() { testHookServeStart = nil })
	if err := r.startServers(); err != nil {
		t.Fatal(err)
	}
	r.stopServers()
	if starts != 3 || reservedAtFirst != 3 {
		t.Errorf("%d servers started, the first with %d of 3 ports reserved: want every port reserved first", starts, reservedAtFirst)
	}
}

// TestStartServersFailureStartsNothing: a configuration that cannot be set
// up fails the start and leaves nothing listening or serving.
func TestStartServersFailureStartsNothing(t *testing.T) {
	r := startFixture(handshake.Ed25519, handshake.Ed25519, handshake.CertKey("no-such-key"))
	starts := 0
	testHookServeStart = func() { starts++ }
	t.Cleanup(func() { testHookServeStart = nil })
	err := r.startServers()
	if err == nil {
		r.stopServers()
		t.Fatal("startServers with an unknown key: no error")
	}
	t.Logf("error: %v", err)
	if starts != 0 || r.servers != nil {
		t.Errorf("after the error: %d servers started, %d kept; want none", starts, len(r.servers))
	}
}
