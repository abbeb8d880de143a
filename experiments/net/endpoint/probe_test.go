package main

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/csv"
	"encoding/pem"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// probeFiles writes a certificate, its key and its trust anchor as PEM
// files and returns their paths.
func probeFiles(t *testing.T) (cert, key, roots string) {
	t.Helper()
	c, _ := testCert(t)
	dir := t.TempDir()
	kd, err := x509.MarshalPKCS8PrivateKey(c.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, key, roots = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem"), filepath.Join(dir, "roots.pem")
	cp := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Certificate[0]})
	for f, b := range map[string][]byte{cert: cp, roots: cp, key: pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kd})} {
		if err := os.WriteFile(f, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return cert, key, roots
}

// The probe prints one line per group with n handshakes and ordered
// quantiles, then done; bad flags and failing handshakes are errors,
// never a line of made-up times.
func TestProbe(t *testing.T) {
	cert, key, roots := probeFiles(t)
	_, _, otherRoots := probeFiles(t)
	base := []string{"-cert", cert, "-key", key, "-servername", "localhost"}
	var buf bytes.Buffer
	o := &out{w: csv.NewWriter(&buf)}
	if err := probe(o, append(base, "-roots", roots, "-n", "50", "-warmup", "1")); err != nil {
		t.Fatal(err)
	}
	rd := csv.NewReader(&buf)
	rd.FieldsPerRecord = -1
	recs, err := rd.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("probe: %q", recs)
	if len(recs) != 3 || recs[2][0] != "done" {
		t.Fatalf("probe printed %q, want two probe lines and done", recs)
	}
	for i, g := range []string{"X25519", "X25519MLKEM768"} {
		r := recs[i]
		if r[0] != "probe" || r[1] != g || r[2] != "50" || len(r) != 6 {
			t.Errorf("line %d = %q, want probe,%s,50,...", i, r, g)
			continue
		}
		med, _ := strconv.ParseInt(r[3], 10, 64)
		p25, _ := strconv.ParseInt(r[4], 10, 64)
		p75, _ := strconv.ParseInt(r[5], 10, 64)
		if !(0 < p25 && p25 <= med && med <= p75 && time.Duration(p75) < 10*time.Second) {
			t.Errorf("%s: quantiles %d, %d, %d ns: want 0 < p25 <= median <= p75", g, p25, med, p75)
		}
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"zero n", append(base, "-roots", roots, "-n", "0"), "want 1 <= n"},
		{"huge n", append(base, "-roots", roots, "-n", "1000001"), "want 1 <= n"},
		{"negative warmup", append(base, "-roots", roots, "-warmup", "-1"), "want 1 <= n"},
		{"unknown group", append(base, "-roots", roots, "-groups", "X25519,P-999"), "unknown group"},
		{"no key", []string{"-cert", cert, "-key", filepath.Join(t.TempDir(), "none"), "-roots", roots}, "no such file"},
		{"untrusted server", append(base, "-roots", otherRoots, "-n", "1", "-warmup", "0"), "certificate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			err := probe(&out{w: csv.NewWriter(&b)}, tc.args)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want one containing %q", err, tc.want)
			}
			if strings.Contains(b.String(), "probe,") {
				t.Errorf("printed %q on failure", b.String())
			}
		})
	}
}

// The span starts at the ClientHello's write and ends at the Finished's:
// a handshake that is slow before its first write is not counted.
func TestLoopHandshakeSpan(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, pool := testCert(t)
	s := tlsBase()
	s.Certificates = []tls.Certificate{c}
	cl := tlsBase()
	cl.RootCAs, cl.ServerName = pool, "localhost"
	d, err := loopHandshake(ln, s, cl)
	if err != nil || d <= 0 || d > 10*time.Second {
		t.Fatalf("loopHandshake = %v, %v", d, err)
	}
	cl.ServerName = "elsewhere"
	if _, err := loopHandshake(ln, s, cl); err == nil {
		t.Error("a handshake with a name the certificate does not hold succeeded")
	}
}
