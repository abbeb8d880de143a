package tlsrun

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"pqrepro/experiments/tls/bridgenet"
	"pqrepro/experiments/tls/openssl"
	"pqrepro/internal/provenance"
)

// cliTable is experiments/tls.toml's [cli] table.
const cliTable = `
[cli]
server = ["s_server", "-accept", "{addr}", "-cert", "{cert}", "-key", "{key}", "-groups", "{groups}", "-tls1_3", "-brief"]
client = ["s_client", "-connect", "{addr}", "-bind", "{bind}", "-servername", "{name}", "-verify_hostname", "{name}", "-CAfile", "{ca}", "-verify_return_error", "-groups", "{groups}", "-tls1_3", "-brief", "-keylogfile", "{keylog}"]
`

// cliSpec is tinySpec with the openssl-cli stack beside the harness, both
// key-share modes, on the given paths.
func cliSpec(paths string) string {
	add := "stacks = [\"openssl-cli\", \"openssl\"]\nkeyshares = [\"direct\", \"hrr\"]\npaths = " + paths
	s := strings.Replace(tinySpec, `cert_keys = ["ed25519"]`, "cert_keys = [\"ed25519\"]\n"+add, 1)
	return strings.Replace(s, "[runs]", cliTable+"\n[runs]", 1)
}

// TestRunOpenSSLCLI records s_server/s_client connections (one s_client
// process per connection) beside the harness's on loopback and on the
// bridge, both key-share modes: every connection is found in its path's
// capture by the port the runner chose, its Finished decrypted with the
// key log s_client wrote, the HelloRetryRequest seen where it must be;
// meta.json records the command lines, the socket options and the host's
// cryptography; the build re-derives the records byte for byte.
func TestRunOpenSSLCLI(t *testing.T) {
	needBridge(t)
	realHostMeasure(t)
	useTestPrefix(t)
	root, _ := filepath.Abs("../../..")
	if _, err := openssl.Cached(root); err != nil {
		t.Skipf("the OpenSSL build is not in the cache (go run mage.go tls:openssl makes it once): %v", err)
	}
	e := newEnv(t, cliSpec(`["loopback", "bridge"]`))
	cfg := e.config(time.Date(2026, 12, 1, 19, 0, 0, 0, time.UTC))
	cfg.BuildRoot = root
	res, err := Run(context.Background(), cfg)
	checkNoLeftovers(t)
	if err != nil {
		t.Fatalf("%v\nlog:\n%s", err, e.log.String())
	}
	if !strings.Contains(e.log.String(), fmt.Sprintf("(%d client Finished confirmed by decryption)", readStats(t, res.Dir).Connections)) {
		t.Errorf("not every client Finished was decrypted:\n%s", e.log.String())
	}
	recs := readRunRecords(t, res.Dir)
	n := map[string]int{}
	for _, r := range recs {
		n[r.Stack+"/"+r.Path]++
		if r.HRR != strings.Contains(r.Config, "/hrr") || !r.Complete || r.NegotiatedGroup != r.Group {
			t.Errorf("row %d (%s on %s): hrr=%v complete=%v group %s", r.Seq, r.Config, r.Path, r.HRR, r.Complete, r.NegotiatedGroup)
		}
		if (r.Stack == StackOpenSSLCLI) != strings.HasSuffix(r.Config, "/openssl-cli") {
			t.Errorf("row %d: stack %s, config %s", r.Seq, r.Stack, r.Config)
		}
		if r.Stack == StackOpenSSLCLI && r.InprocServerNs != nil {
			t.Errorf("row %d: s_server reports no timer, yet inproc_server_ns = %d", r.Seq, *r.InprocServerNs)
		}
		if (r.Path == PathBridge) != strings.HasPrefix(r.Server, bridgenet.ServerAddr+":") {
			t.Errorf("row %d on %s: server %s", r.Seq, r.Path, r.Server)
		}
	}
	for _, k := range []string{"openssl-cli/loopback", "openssl-cli/bridge", "openssl/loopback", "openssl/bridge"} {
		if n[k] != 32 {
			t.Errorf("%s: %d records, want 32 (all: %v)", k, n[k], n)
		}
	}
	m, err := provenance.Read(res.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(m.Tools["openssl.program"], "OpenSSL 3.5") || !strings.Contains(m.Tools["openssl.cli_client"], "-bind {bind}") {
		t.Errorf("meta tools: %v", m.Tools)
	}
	so, _ := m.Measured["socket_options"].(map[string]any)
	cli, _ := so[StackOpenSSLCLI].(map[string]any)
	if cli["server_tcp_nodelay"] != false || cli["client_tcp_nodelay"] != true {
		t.Errorf("meta socket_options: %v", so)
	}
	hc, _ := m.Measured["host_crypto"].(map[string]any)
	for _, when := range []string{"before", "after"} {
		h, _ := hc[when].(map[string]any)
		ms, _ := h["ms_per_op"].(map[string]any)
		if v, _ := ms["ecdh-p384"].(float64); v <= 0 {
			t.Errorf("meta host_crypto.%s: %v", when, h)
		}
		if s, _ := h["cpu_settings"].(string); !strings.Contains(s, "OPENSSL_ia32cap=") {
			t.Errorf("meta host_crypto.%s.cpu_settings %q", when, s)
		}
	}
	rel, _ := filepath.Rel(e.root, res.Dir)
	checkRederive(t, e.root, filepath.ToSlash(rel))
}

// TestRunWithoutDocker: a spec whose docker cells this host cannot run
// records the others, says why in the log and meta.json, and makes the
// fallback the primary cell.
func TestRunWithoutDocker(t *testing.T) {
	needRoot(t)
	root, _ := filepath.Abs("../../..")
	if _, err := openssl.Cached(root); err != nil {
		t.Skipf("the OpenSSL build is not in the cache (go run mage.go tls:openssl makes it once): %v", err)
	}
	old := dockerUnavailable
	dockerUnavailable = func() error { return fmt.Errorf("no Docker engine here (test)") }
	t.Cleanup(func() { dockerUnavailable = old })
	body := strings.Replace(cliSpec(`["loopback", "docker"]`), `baseline = "baseline"`,
		"baseline = \"baseline\"\n\n[paper.cell]\nstack = \"openssl-cli\"\npath = \"docker\"\nkeyshare = \"direct\"\n\n[paper.fallback]\nstack = \"openssl-cli\"\npath = \"loopback\"\nkeyshare = \"direct\"", 1)
	body = strings.Replace(body, `stacks = ["openssl-cli", "openssl"]`, `stacks = ["openssl-cli"]`, 1)
	e := newEnv(t, body)
	cfg := e.config(time.Date(2026, 12, 1, 19, 5, 0, 0, time.UTC))
	cfg.BuildRoot = root
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatalf("%v\nlog:\n%s", err, e.log.String())
	}
	if !strings.Contains(e.log.String(), "left out: every cell on the docker path: no Docker engine here (test); primary cell openssl-cli/loopback/direct") {
		t.Errorf("the log does not say what was left out:\n%s", e.log.String())
	}
	m, err := provenance.Read(res.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(m.Notes, "\n"), "left out: docker: no Docker engine here (test)") {
		t.Errorf("meta notes: %v", m.Notes)
	}
	for _, r := range readRunRecords(t, res.Dir) {
		if r.Path != PathLoopback {
			t.Fatalf("row %d on %s", r.Seq, r.Path)
		}
	}
}

// The other tests skip openssl speed's 13 seconds per measurement.
func init() {
	measureHost = func(ctx context.Context, bin string) (*openssl.HostCrypto, error) {
		return &openssl.HostCrypto{Command: "fake (tests)", CPUSettings: "OPENSSL_ia32cap=0x0:0x0", OpsPerSecond: map[string]float64{"ecdh-p384": 1000}, MsPerOp: map[string]float64{"ecdh-p384": 1}}, nil
	}
}

// realHostMeasure runs the real openssl.MeasureHost in this test.
func realHostMeasure(t *testing.T) {
	old := measureHost
	measureHost = openssl.MeasureHost
	t.Cleanup(func() { measureHost = old })
}
