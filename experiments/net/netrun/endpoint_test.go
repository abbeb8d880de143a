package netrun

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"pqrepro/experiments/instruments/handshake"
)

// buildOrSkip builds the endpoint with toolchain into a temporary root
// holding a copy of its source; it skips when the toolchain cannot be
// fetched (no module proxy), which is the only reason a build of this
// source may fail here.
func buildOrSkip(t *testing.T, root, toolchain string) *Endpoint {
	t.Helper()
	ep, err := BuildEndpoint(context.Background(), root, toolchain, nil)
	if err != nil {
		if strings.Contains(err.Error(), "download") || strings.Contains(err.Error(), "toolchain") && strings.Contains(err.Error(), "proxy") {
			t.Skipf("skipped: %s cannot be fetched here: %v", toolchain, err)
		}
		t.Fatal(err)
	}
	return ep
}

// endpointRoot is a temporary repository root with the endpoint's source.
func endpointRoot(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	copyEndpoint(t, root)
	return root
}

func here(fn func()) { fn() }

// TestEndpointToolchains builds the same endpoint source with Go 1.24 (the
// original study's) and the project's Go, and checks with each that a
// handshake negotiates each of the study's groups without a
// HelloRetryRequest, and that a group the server does not support fails
// as a configuration error (which fails a run), not as a network failure.
func TestEndpointToolchains(t *testing.T) {
	root := endpointRoot(t)
	b, err := handshake.MakeCerts(handshake.CertConfig{Key: handshake.CertKey("ecdsa-p256"), Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	cert, key, roots, err := endpointFiles(t.TempDir(), b)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []string{"go1.24.4", "go1.27.3"} {
		t.Run(tc, func(t *testing.T) {
			ep := buildOrSkip(t, root, tc)
			if ep.GoVersion != tc {
				t.Fatalf("build info says %s, want %s", ep.GoVersion, tc)
			}
			fi, _ := os.Stat(ep.Path)
			again := buildOrSkip(t, root, tc)
			fi2, _ := os.Stat(again.Path)
			if again.Path != ep.Path || !fi.ModTime().Equal(fi2.ModTime()) {
				t.Errorf("second build was not served from the cache: %s then %s", ep.Path, again.Path)
			}
			var mu sync.Mutex
			var srecs []handshake.ServerRecord
			ctx := context.Background()
			srv, err := startEndpointServer(ctx, ep, cert, key, 5*time.Second, "",
				[]string{"127.0.0.1:0=X25519", "127.0.0.1:0=X25519MLKEM768"}, here,
				func(r handshake.ServerRecord) { mu.Lock(); srecs = append(srecs, r); mu.Unlock() })
			if err != nil {
				t.Fatal(err)
			}
			var keylog strings.Builder
			cli, err := startEndpointClient(ep, roots, 5*time.Second, "", &keylog, here)
			if err != nil {
				srv.close()
				t.Fatal(err)
			}
			for _, g := range []string{"X25519MLKEM768", "X25519"} {
				rec, _, err := cli.dial(ctx, srv.addrs[g], g, -1)
				if err != nil {
					t.Errorf("%s: %v", g, err)
					continue
				}
				if rec.DurationNs <= 0 || rec.HRR || rec.Local == "" {
					t.Errorf("%s: record %+v", g, rec)
				}
			}
			// A transfer connection (our extension): the response in full,
			// its last byte after the handshake.
			rec, resp, err := cli.dial(ctx, srv.addrs["X25519MLKEM768"], "X25519MLKEM768", 100_000)
			if err != nil || resp.read != 100_000 || resp.ttlbNs <= rec.DurationNs {
				t.Errorf("transfer: err %v, read %d, ttlb %d ns after a %d ns handshake", err, resp.read, resp.ttlbNs, rec.DurationNs)
			}
			// The X25519 server offered only X25519MLKEM768: no common group.
			_, _, err = cli.dial(ctx, srv.addrs["X25519"], "X25519MLKEM768", -1)
			if err == nil || classify(err) != "" {
				t.Errorf("wrong group: err %v (class %q), want a configuration error", err, classify(err))
			}
			if err := cli.close(); err != nil {
				t.Errorf("client: %v", err)
			}
			if err := srv.close(); err != nil {
				t.Errorf("server: %v", err)
			}
			if n := strings.Count(keylog.String(), "CLIENT_TRAFFIC_SECRET_0"); n != 3 {
				t.Errorf("%d key log traffic secrets, want 3:\n%s", n, keylog.String())
			}
			ok, bad := 0, 0
			for _, r := range srecs {
				if r.Err == nil {
					ok++
				} else {
					bad++
				}
			}
			if ok != 3 || bad != 1 {
				t.Errorf("server reported %d good and %d failed connections, want 3 and 1: %+v", ok, bad, srecs)
			}
		})
	}
}

// TestEndpointModuleTests runs the endpoint module's own tests (its
// ServerHello reader) with both toolchains: the main module's
// `go test ./...` does not enter a nested module.
func TestEndpointModuleTests(t *testing.T) {
	root := endpointRoot(t)
	for _, tc := range []string{"go1.24.4", "go1.27.3"} {
		t.Run(tc, func(t *testing.T) {
			buildOrSkip(t, root, tc) // skips when the toolchain cannot be fetched
			cmd := exec.Command("go", "test", "-count=1", ".")
			cmd.Dir = "../endpoint" // the test runs in experiments/net/netrun
			cmd.Env = append(os.Environ(), "GOTOOLCHAIN="+tc, "GOFLAGS=", "GOWORK=off")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("go test in %s with %s: %v\n%s", EndpointDir, tc, err, out)
			}
		})
	}
}
