package tlsrun

import (
	"context"
	"crypto/tls"
	"errors"
	"strings"
	"testing"
	"time"

	"pqrepro/experiments/instruments/handshake"
)

func startFixture(keys ...handshake.CertKey) *runner {
	r := &runner{spec: &Spec{}, paths: []path{&loopbackPath{}}}
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

// TestServerEndSeenTwice: a server that stops during the connections (a
// remote server whose SSH session dropped) is an error for the connection
// loop, and stopServers must still see its end: taking it from s.done
// without putting it back hung TestRunRemoteFaults/connection_dropped in
// CI until the package timed out.
func TestServerEndSeenTwice(t *testing.T) {
	s := &server{results: make(chan handshake.ServerRecord, 8), done: make(chan error, 1), stop: func() {}}
	s.done <- errors.New("remote session ended")
	if _, err := s.record(context.Background()); err == nil || !strings.Contains(err.Error(), "server stopped: remote session ended") {
		t.Fatalf("record: %v, want the server's end", err)
	}
	r := &runner{servers: []*server{s}}
	stopped := make(chan struct{})
	go func() { r.stopServers(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(5 * time.Second):
		t.Fatal("stopServers waits for an end the connection loop took")
	}
}
