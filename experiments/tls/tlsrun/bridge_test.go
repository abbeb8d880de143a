package tlsrun

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"pqrepro/datasets/tlsdata"
	"pqrepro/experiments/instruments/rederive"
	"pqrepro/experiments/instruments/runlife"
	"pqrepro/experiments/tls/bridgenet"
	"pqrepro/internal/provenance"
	"pqrepro/internal/repro"
)

// bridgeSpec is tinySpec run on both paths.
var bridgeSpec = strings.Replace(tinySpec, "warmup = 1\n", "warmup = 1\npaths = [\"loopback\", \"bridge\"]\n", 1)

func needBridge(t *testing.T) {
	t.Helper()
	needRoot(t)
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("skipped: the bridge path needs iproute2's ip (apt-get install iproute2)")
	}
}

// useTestPrefix names this test's namespaces apart from a real run's.
func useTestPrefix(t *testing.T) {
	old := NetnsPrefix
	NetnsPrefix = "pqrbt"
	t.Cleanup(func() { NetnsPrefix = old })
}

// ourNamespaces lists the namespaces this process made with the test prefix.
func ourNamespaces(t *testing.T) []string {
	t.Helper()
	ents, _ := os.ReadDir(bridgenet.NetnsDir)
	var out []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), fmt.Sprintf("%s%d-", NetnsPrefix, os.Getpid())) {
			out = append(out, e.Name())
		}
	}
	return out
}

func checkNoLeftovers(t *testing.T) {
	t.Helper()
	if l := ourNamespaces(t); len(l) > 0 {
		t.Errorf("namespaces left behind: %v", l)
	}
	out, _ := exec.Command("ip", "-o", "link").Output()
	if strings.Contains(string(out), NetnsPrefix+"-") {
		t.Errorf("devices named %s-* in the host namespace:\n%s", NetnsPrefix, out)
	}
}

func TestRunBridge(t *testing.T) {
	needBridge(t)
	useTestPrefix(t)
	e := newEnv(t, bridgeSpec)
	res, err := Run(context.Background(), e.config(time.Date(2026, 11, 30, 13, 0, 0, 0, time.UTC)))
	checkNoLeftovers(t)
	if err != nil {
		t.Fatalf("%v\nlog:\n%s", err, e.log.String())
	}
	recs := readRunRecords(t, res.Dir)
	// 2 configurations x 2 paths x 8 connections.
	count := map[string]int{}
	for _, r := range recs {
		count[r.Path]++
		if !r.Complete || r.NegotiatedGroup != r.Group || r.HRR {
			t.Errorf("seq %d (%s on %s) incomplete or wrong: %+v", r.Seq, r.Config, r.Path, r)
		}
		wantServer := "127.0.0.1:"
		if r.Path == PathBridge {
			wantServer = bridgenet.ServerAddr + ":"
			// MTU 1500 with offloads off: the server's flight is cut
			// into several frames of at most 1514 bytes.
			if r.PacketsS2C < 3 || r.FrameBytesS2C > int64(r.PacketsS2C)*1514 {
				t.Errorf("seq %d on the bridge: %d frames, %d bytes server to client: want MTU-sized frames", r.Seq, r.PacketsS2C, r.FrameBytesS2C)
			}
		}
		if !strings.HasPrefix(r.Server, wantServer) {
			t.Errorf("seq %d on %s: server %s", r.Seq, r.Path, r.Server)
		}
	}
	if count[PathLoopback] != 16 || count[PathBridge] != 16 {
		t.Fatalf("rows per path %v, want 16 each", count)
	}
	m, err := provenance.Read(res.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if m.Files[CaptureName] == "" || m.Files[BridgeCaptureName] == "" {
		t.Errorf("meta files lack a capture: %v", m.Files)
	}
	paths, _ := m.Measured["paths"].(map[string]any)
	br, _ := paths[PathBridge].(map[string]any)
	lo, _ := paths[PathLoopback].(map[string]any)
	if br["mtu"] != float64(1500) || br["tcp_nodelay"] != true || br["congestion_control"] == "" || br["offloads_kernel_default"] != false {
		t.Errorf("meta paths.bridge: %v", br)
	}
	offs, _ := br["offloads"].(map[string]any)
	if len(offs) != 4 {
		t.Errorf("meta paths.bridge.offloads: %v, want 4 devices", offs)
	}
	for dev, o := range offs {
		if om := o.(map[string]any); om["tso"] != false || om["gso"] != false || om["gro"] != false {
			t.Errorf("offloads of %s: %v, want off", dev, om)
		}
	}
	if lo["mtu"] != float64(65536) || lo["congestion_control"] == "" {
		t.Errorf("meta paths.loopback: %v", lo)
	}
	// The TCP stack where each path's clients and servers run, as the
	// dataset reads it.
	mb, err := os.ReadFile(filepath.Join(res.Dir, provenance.FileName))
	if err != nil {
		t.Fatal(err)
	}
	st, err := tlsdata.TCPStack("meta.json", mb)
	if err != nil {
		t.Fatalf("measured.tcp_stack: %v", err)
	}
	if got := slices.Sorted(maps.Keys(st)); !slices.Equal(got, []string{"bridge/client", "bridge/server", "loopback/client"}) || len(st["bridge/server"].Qdiscs) != 1 || st["loopback/client"].Qdiscs[Interface] == "" {
		t.Errorf("measured.tcp_stack: %v", st)
	}

	// Both captures are small: committed gzip'd in the run folder, and
	// the build's records stage re-derives the rows of both paths from
	// them (tlsjoin joins each path's connections with its own capture).
	for _, n := range []string{CaptureName, BridgeCaptureName} {
		if _, err := os.Stat(filepath.Join(res.Dir, n+rederive.GzipExt)); err != nil || m.Files[n+rederive.GzipExt] == "" {
			t.Errorf("%s is not committed gzip'd in the run folder: %v", n, err)
		}
	}
	rel, _ := filepath.Rel(e.root, res.Dir)
	checkRederive(t, e.root, filepath.ToSlash(rel))
}

// TestRunBridgeRemoved deletes the bridge, or a namespace, from another
// goroutine mid-run: the run must stop, remove everything it created and
// register nothing.
func TestRunBridgeRemoved(t *testing.T) {
	needBridge(t)
	useTestPrefix(t)
	for i, what := range []string{"bridge", "netns"} {
		t.Run(what, func(t *testing.T) {
			e := newEnv(t, strings.Replace(bridgeSpec, "n = 5", "n = 200", 1))
			marker, spec := e.previousRun(t)
			cfg := e.config(time.Date(2026, 11, 30, 13, 0, 1+i, 0, time.UTC))
			var once sync.Once
			var wg sync.WaitGroup
			var delErr error
			cfg.Progress = func(done, total int) {
				if done < 20 {
					return
				}
				once.Do(func() {
					names := ourNamespaces(t)
					wg.Add(1)
					go func() {
						defer wg.Done()
						if len(names) != 3 {
							delErr = fmt.Errorf("found namespaces %v, want 3", names)
							return
						}
						var cmd *exec.Cmd
						if what == "bridge" {
							cmd = exec.Command("ip", "-n", names[0], "link", "del", NetnsPrefix+"-br0") // names sort b, c, s
						} else {
							cmd = exec.Command("ip", "netns", "del", names[1])
						}
						if out, err := cmd.CombinedOutput(); err != nil {
							delErr = fmt.Errorf("%v: %s", err, out)
						}
					}()
				})
			}
			_, err := Run(context.Background(), cfg)
			wg.Wait()
			if delErr != nil {
				t.Fatal(delErr)
			}
			if !errors.Is(err, bridgenet.ErrRemoved) {
				t.Fatalf("err = %v, want bridgenet.ErrRemoved\nlog:\n%s", err, e.log.String())
			}
			checkNoLeftovers(t)
			e.checkUntouched(t, marker, spec)
		})
	}
}

// TestRunBridgeCancelled: Ctrl-C (SIGINT, SIGTERM cancel the context in
// the pipeline) mid-run on the bridge path removes everything too.
func TestRunBridgeCancelled(t *testing.T) {
	needBridge(t)
	useTestPrefix(t)
	e := newEnv(t, strings.Replace(bridgeSpec, "n = 5", "n = 200", 1))
	marker, spec := e.previousRun(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := e.config(time.Date(2026, 11, 30, 13, 0, 5, 0, time.UTC))
	cfg.Progress = func(done, total int) {
		if done == 30 {
			cancel()
		}
	}
	_, err := Run(ctx, cfg)
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("err = %v, want ErrInterrupted", err)
	}
	checkNoLeftovers(t)
	e.checkUntouched(t, marker, spec)
}

// BenchmarkPaths runs the repository's quick profile on one path at a
// time, into a temporary tree, and reports the run's handshake rate
// (connections over the wall time from the first dial to the last close,
// capture on) per path:
//
//	go test -run '^$' -bench Paths -benchtime 1x ./experiments/tls/tlsrun
func BenchmarkPaths(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("skipped: needs root (capture, namespaces)")
	}
	body, err := os.ReadFile("../../tls.toml")
	if err != nil {
		b.Fatal(err)
	}
	old := NetnsPrefix
	NetnsPrefix = "pqrbb"
	defer func() { NetnsPrefix = old }()
	for _, path := range []string{PathLoopback, PathBridge} {
		b.Run(path, func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				root := b.TempDir()
				sp := strings.Replace(string(body), `paths = ["loopback", "bridge"]`, `paths = ["`+path+`"]`, 1)
				writeSpec(b, root, sp)
				res, err := Run(context.Background(), RunConfig{Store: &repro.Store{Dir: filepath.Join(root, "store")},
					Config: runlife.Config{Root: root, Profile: "quick", Now: func() time.Time { return time.Date(2026, 12, 1, 0, 0, i, 0, time.UTC) }}})
				if err != nil {
					b.Fatal(err)
				}
				st := readStats(b, res.Dir)
				b.ReportMetric(st.Rate, "handshakes/s")
				b.ReportMetric(float64(st.Connections), "connections")
			}
		})
	}
}
