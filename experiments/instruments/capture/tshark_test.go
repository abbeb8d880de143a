package capture

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"pqrepro/experiments/instruments/handshake"
)

// parseEpoch turns tshark's frame.time_epoch ("1700000000.123456789") into
// Unix ns exactly (no floating point).
func parseEpoch(s string) (int64, error) {
	sec, frac, _ := strings.Cut(s, ".")
	frac = (frac + "000000000")[:9]
	a, err := strconv.ParseInt(sec, 10, 64)
	if err != nil {
		return 0, err
	}
	b, err := strconv.ParseInt(frac, 10, 64)
	return a*1e9 + b, err
}

// TestTsharkCrossCheck decrypts a fresh capture with tshark and the key log
// and checks that every connection's ClientHello, ServerHello and client
// Finished frame times equal the reader's exactly.
func TestTsharkCrossCheck(t *testing.T) {
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Skip("skipped: tshark not on PATH (apt-get install tshark; CI installs it)")
	}
	path, recs, _ := captureRun(t, handshake.Config{Group: tls.SecP384r1MLKEM1024, ClientGroups: []tls.CurveID{tls.X25519MLKEM768, tls.SecP384r1MLKEM1024}, ExpectHRR: true,
		Cert: handshake.CertConfig{Key: handshake.MLDSA44, Chain: true}, N: 6})
	res := readFile(t, path, ReadOptions{})
	// The capture sees all loopback traffic, including that of tests
	// running in parallel in other packages: keep this run's server only.
	own := res.Records[:0]
	for _, r := range res.Records {
		if r.Server == recs[0].Server {
			own = append(own, r)
		}
	}
	res.Records = own
	kl := filepath.Join(t.TempDir(), "keylog.txt")
	if err := os.WriteFile(kl, res.Secrets, 0o600); err != nil {
		t.Fatal(err)
	}
	// Decode the server's port as TLS: left to its heuristics, tshark may
	// hand a connection whose ephemeral client port another dissector
	// claims to that dissector and miss its handshake (CI saw a client
	// on port 48898 with none of its messages found).
	out, err := exec.Command("tshark", "-n", "-r", path, "-o", "tls.keylog_file:"+kl, "-d", "tcp.port=="+serverPort(res)+",tls", "-Y", "tls.handshake.type",
		"-T", "fields", "-E", "separator=;", "-E", "aggregator=,",
		"-e", "frame.time_epoch", "-e", "tcp.srcport", "-e", "tcp.dstport", "-e", "tls.handshake.type").Output()
	if err != nil {
		t.Fatalf("tshark: %v", err)
	}
	type key struct {
		port  string
		field string
	}
	first := map[key]int64{}
	set := func(k key, ns int64) {
		if _, ok := first[k]; !ok {
			first[k] = ns
		}
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Split(sc.Text(), ";")
		if len(f) != 4 {
			t.Fatalf("tshark line %q", sc.Text())
		}
		ns, err := parseEpoch(f[0])
		if err != nil {
			t.Fatal(err)
		}
		for _, typ := range strings.Split(f[3], ",") {
			switch {
			case typ == "1":
				set(key{f[1], "ch"}, ns) // client port is the source
			case typ == "2":
				// Both the HRR and the ServerHello are type 2; the reader's
				// ServerHello is the last one, so keep overwriting.
				first[key{f[2], "sh"}] = ns
			case typ == "20" && f[2] == serverPort(res): // client to server
				set(key{f[1], "cf"}, ns)
			}
		}
	}
	if len(res.Records) != 6 {
		t.Fatalf("%d records", len(res.Records))
	}
	for _, r := range res.Records {
		port := r.Client[strings.LastIndex(r.Client, ":")+1:]
		for _, c := range []struct {
			f   string
			got *int64
		}{{"ch", r.ClientHelloNs}, {"sh", r.ServerHelloNs}, {"cf", r.ClientFinishedNs}} {
			want, ok := first[key{port, c.f}]
			if !ok || c.got == nil || *c.got != want {
				t.Errorf("%s %s: reader %v, tshark %d (found %v)", r.Client, c.f, val(c.got), want, ok)
			}
		}
	}
}

func serverPort(res *Result) string {
	s := res.Records[0].Server
	return s[strings.LastIndex(s, ":")+1:]
}
