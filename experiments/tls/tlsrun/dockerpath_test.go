package tlsrun

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"pqrepro/experiments/tls/dockernet"
	"pqrepro/experiments/tls/openssl"
	"pqrepro/internal/provenance"
)

// needDocker skips, with the reason, where the docker path cannot run;
// CI installs docker.io and runs as root, so there it runs.
func needDocker(t *testing.T) {
	t.Helper()
	needBridge(t)
	if err := dockernet.Available(); err != nil {
		t.Skipf("skipped: the docker path cannot run here: %v", err)
	}
}

// TestRunDocker records the docker path at quick size, as CI must (issue
// 24): s_server in the server container, s_client in the client
// container's namespace, the capture on its eth0, both key-share modes;
// every connection joined with the docker path's capture and decrypted,
// MTU-sized frames, meta.json's docker entry; nothing of the daemon,
// containers, network or image left afterwards.
func TestRunDocker(t *testing.T) {
	needDocker(t)
	useTestPrefix(t)
	oldPrefix := DockerPrefix
	DockerPrefix = "pqrdt"
	t.Cleanup(func() { DockerPrefix = oldPrefix })
	root, _ := filepath.Abs("../../..")
	if _, err := openssl.Cached(root); err != nil {
		t.Skipf("the OpenSSL build is not in the cache (go run mage.go tls:openssl makes it once): %v", err)
	}
	body := strings.Replace(cliSpec(`["loopback", "docker"]`), `stacks = ["openssl-cli", "openssl"]`, `stacks = ["openssl-cli"]`, 1)
	e := newEnv(t, body)
	cfg := e.config(time.Date(2026, 12, 1, 19, 10, 0, 0, time.UTC))
	cfg.BuildRoot = root
	res, err := Run(context.Background(), cfg)
	checkNoLeftovers(t)
	if left, lerr := dockernet.Leftovers(DockerPrefix); lerr != nil || len(left) > 0 {
		t.Errorf("docker leftovers %v (%v)", left, lerr)
	}
	if err != nil {
		t.Fatalf("%v\nlog:\n%s", err, e.log.String())
	}
	if !strings.Contains(e.log.String(), fmt.Sprintf("(%d client Finished confirmed by decryption)", readStats(t, res.Dir).Connections)) {
		t.Errorf("not every client Finished was decrypted:\n%s", e.log.String())
	}
	n := map[string]int{}
	for _, r := range readRunRecords(t, res.Dir) {
		n[r.Path]++
		if r.HRR != strings.Contains(r.Config, "/hrr") || !r.Complete || r.NegotiatedGroup != r.Group {
			t.Errorf("row %d (%s on %s): hrr=%v complete=%v group %s", r.Seq, r.Config, r.Path, r.HRR, r.Complete, r.NegotiatedGroup)
		}
		if r.Path == PathDocker && (r.PacketsS2C < 2 || r.FrameBytesS2C > int64(r.PacketsS2C)*1514) {
			t.Errorf("row %d on docker: %d frames, %d bytes server to client: want MTU-sized frames", r.Seq, r.PacketsS2C, r.FrameBytesS2C)
		}
	}
	if n[PathDocker] != 32 || n[PathLoopback] != 32 {
		t.Fatalf("records per path %v, want 32 each", n)
	}
	m, err := provenance.Read(res.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if m.Files[DockerCaptureName] == "" {
		t.Errorf("meta files lack %s: %v", DockerCaptureName, m.Files)
	}
	paths, _ := m.Measured["paths"].(map[string]any)
	d, _ := paths[PathDocker].(map[string]any)
	if d["mtu"] != float64(1500) || d["image"] == "" || d["daemon"] == "" {
		t.Errorf("meta paths.docker: %v", d)
	}
	rel, _ := filepath.Rel(e.root, res.Dir)
	checkRederive(t, e.root, filepath.ToSlash(rel))
}
