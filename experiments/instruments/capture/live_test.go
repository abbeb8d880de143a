package capture

import (
	"context"
	"crypto/tls"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"pqrepro/experiments/instruments/handshake"
)

// needRoot skips a test that opens AF_PACKET sockets when it cannot.
func needRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("skipped: live capture on lo needs root or CAP_NET_RAW (CI runs tests as root; locally run with sudo -E go test)")
	}
}

// captureRun runs cfg's handshakes on 127.0.0.1 while capturing lo, and
// returns the capture file, the in-process records and the capture's stats.
func captureRun(t testing.TB, cfg handshake.Config) (string, []handshake.ConnRecord, Stats) {
	t.Helper()
	needRoot(t)
	path := filepath.Join(t.TempDir(), "run.pcapng")
	c, err := Start(context.Background(), Options{Interface: "lo", Path: path})
	if err != nil {
		t.Fatal(err)
	}
	cfg.KeyLog = c.KeyLog()
	recs, runErr := handshake.Run(context.Background(), cfg)
	st, err := c.Stop()
	if runErr != nil {
		t.Fatal(runErr)
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Valid(); err != nil {
		t.Fatal(err)
	}
	return path, recs, st
}

func readFile(t testing.TB, path string, opt ReadOptions) *Result {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	res, err := Read(f, opt)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// byClient indexes capture records by client address, keeping the last
// (the run's connections come after any warm-up with the same port).
func byClient(rs []Record) map[string]Record {
	m := make(map[string]Record)
	for _, r := range rs {
		m[r.Client] = r
	}
	return m
}

func TestLiveCaptureMatchesInProcess(t *testing.T) {
	cases := []struct {
		name string
		cfg  handshake.Config
	}{
		{"X25519/Ed25519", handshake.Config{Group: tls.X25519, Cert: handshake.CertConfig{Key: handshake.Ed25519}}},
		{"MLKEM1024/MLDSA87 chain", handshake.Config{Group: tls.MLKEM1024, Cert: handshake.CertConfig{Key: handshake.MLDSA87, Chain: true}}},
		{"SecP384r1MLKEM1024/ECDSA HRR", handshake.Config{Group: tls.SecP384r1MLKEM1024, ClientGroups: []tls.CurveID{tls.X25519MLKEM768, tls.SecP384r1MLKEM1024}, ExpectHRR: true, Cert: handshake.CertConfig{Key: handshake.ECDSAP256}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.N, cfg.Warmup = 5, 1
			path, recs, st := captureRun(t, cfg)
			res := readFile(t, path, ReadOptions{})
			if len(res.Secrets) != st.SecretBytes || st.SecretBytes == 0 {
				t.Errorf("file holds %d secret bytes, capture wrote %d", len(res.Secrets), st.SecretBytes)
			}
			caps := byClient(res.Records)
			for _, r := range recs {
				c, ok := caps[r.Client]
				if !ok {
					t.Fatalf("connection %s not in the capture (%d records)", r.Client, len(res.Records))
				}
				if !c.Complete || c.Group != r.GroupName || c.HRR != r.HRR || c.Retransmissions != 0 {
					t.Errorf("capture %v, in-process group %s hrr %v", c, r.GroupName, r.HRR)
				}
				if !c.ClientFinishedVerified {
					t.Errorf("%s: client Finished not confirmed by decryption with the embedded secrets", c.Client)
				}
				// Ths (ClientHello..client Finished) lies inside the client's
				// dial..handshake-complete interval, which adds only the TCP
				// handshake and scheduling.
				ths := *c.ThsNs
				if ths <= 0 || ths > r.ClientNs {
					t.Errorf("%s: Ths %d ns, client timer %d ns: want 0 < Ths <= timer", c.Client, ths, r.ClientNs)
				}
				if *c.SynNs < r.StartUnixNs || *c.ClientHelloNs < *c.SynNs || *c.ServerHelloNs < *c.ClientHelloNs ||
					*c.ServerFlightEndNs < *c.ServerHelloNs || *c.ClientFinishedNs < *c.ServerFlightEndNs || *c.FinNs < *c.ClientFinishedNs {
					t.Errorf("%s: times out of order: %+v", c.Client, c)
				}
				// One SYN, ACK, ClientHello, (CCS+ClientHello2), CCS/Finished,
				// close_notify+FIN... at least 5 packets each way, and no
				// loopback duplicates (which would be counted as retransmissions).
				if c.PacketsC2S < 4 || c.PacketsS2C < 4 || c.TCPPayloadBytesS2C < 500 || c.FrameBytesC2S <= c.TCPPayloadBytesC2S {
					t.Errorf("%s: implausible counts %+v", c.Client, c)
				}
			}
		})
	}
}

func TestStartWithoutRootOrBadInterface(t *testing.T) {
	dir := t.TempDir()
	_, err := Start(context.Background(), Options{Interface: "no-such-if0", Path: filepath.Join(dir, "x.pcapng")})
	if err == nil {
		t.Fatal("capture on a missing interface started")
	}
	if os.Geteuid() != 0 {
		_, err := Start(context.Background(), Options{Interface: "lo", Path: filepath.Join(dir, "x.pcapng")})
		if !errors.Is(err, ErrNeedRoot) {
			t.Fatalf("err = %v, want ErrNeedRoot", err)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("failed Start left files: %v", ents)
	}
}

func TestCancelWritesCompleteFile(t *testing.T) {
	needRoot(t)
	path := filepath.Join(t.TempDir(), "cancel.pcapng")
	ctx, cancel := context.WithCancel(context.Background())
	c, err := Start(ctx, Options{Interface: "lo", Path: path})
	if err != nil {
		t.Fatal(err)
	}
	_, err = handshake.Run(ctx, handshake.Config{Group: tls.X25519, Cert: handshake.CertConfig{Key: handshake.Ed25519}, N: 1000, KeyLog: c.KeyLog(),
		Progress: func(done, total int) {
			if done == 3 {
				cancel() // as Ctrl-C would
			}
		}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("run err = %v", err)
	}
	if _, err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	res := readFile(t, path, ReadOptions{}) // fails on any damage
	if len(res.Records) < 3 {
		t.Fatalf("%d records after cancel, want >= 3", len(res.Records))
	}
	if ents, _ := os.ReadDir(filepath.Dir(path)); len(ents) != 1 {
		t.Fatalf("temporary files left: %v", ents)
	}
}
