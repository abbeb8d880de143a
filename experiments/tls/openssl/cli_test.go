package openssl

import (
	"bytes"
	"context"
	"crypto/tls"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"pqrepro/experiments/instruments/handshake"
)

// The command lines of experiments/tls.toml's [cli] (a copy: this package
// does not read the spec; tlsrun's tests check the spec's own).
var (
	testServerArgs = []string{"s_server", "-accept", "{addr}", "-cert", "{cert}", "-key", "{key}", "-groups", "{groups}", "-tls1_3", "-brief"}
	testClientArgs = []string{"s_client", "-connect", "{addr}", "-bind", "{bind}", "-servername", "{name}", "-verify_hostname", "{name}",
		"-CAfile", "{ca}", "-verify_return_error", "-groups", "{groups}", "-tls1_3", "-brief", "-keylogfile", "{keylog}"}
)

func TestCheckCommandLine(t *testing.T) {
	for _, tc := range []struct {
		name   string
		want   string
		args   []string
		places []string
		err    string
	}{
		{"server", "s_server", testServerArgs, ServerPlaces, ""},
		{"client", "s_client", testClientArgs, ClientPlaces, ""},
		{"empty", "s_server", nil, ServerPlaces, "must start with s_server"},
		{"wrong subcommand", "s_client", testServerArgs, ClientPlaces, "must start with s_client"},
		{"no -brief", "s_server", testServerArgs[:len(testServerArgs)-1], ServerPlaces, "-brief is missing"},
		{"placeholder missing", "s_server", []string{"s_server", "-accept", "{addr}", "-brief"}, ServerPlaces, "{cert} occurs 0 times"},
		{"placeholder twice", "s_server", append(append([]string(nil), testServerArgs...), "-groups", "{groups}"), ServerPlaces, "{groups} occurs 2 times"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckCommandLine(tc.want, tc.args, tc.places)
			if tc.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("error %v, want one containing %q", err, tc.err)
			}
		})
	}
}

func TestParseSummary(t *testing.T) {
	for _, tc := range []struct {
		name  string
		lines []string
		want  summary
	}{
		{"KEM group", []string{"CONNECTION ESTABLISHED", "Protocol version: TLSv1.3", "Ciphersuite: TLS_AES_256_GCM_SHA384",
			"Peer certificate: CN=localhost", "Hash used: UNDEF", "Signature type: mldsa87", "Verification: OK", "Negotiated TLS1.3 group: MLKEM1024"},
			summary{version: "TLSv1.3", group: "MLKEM1024", sigalg: "mldsa87", verification: "Verification: OK"}},
		{"ECDHE peer key", []string{"Protocol version: TLSv1.3", "Signature type: ed25519", "Verification: OK", "Peer Temp Key: X25519, 253 bits"},
			summary{version: "TLSv1.3", group: "X25519", sigalg: "ed25519", verification: "Verification: OK"}},
		{"EC peer key", []string{"Protocol version: TLSv1.3", "Peer Temp Key: ECDH, secp384r1, 384 bits"},
			summary{version: "TLSv1.3", group: "secp384r1"}},
		{"KEM key type", []string{"Protocol version: TLSv1.3", "Peer Temp Key: ML-KEM-1024"},
			summary{version: "TLSv1.3", group: "ML-KEM-1024"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s summary
			done := false
			for i, l := range tc.lines {
				if done = parseSummaryLine(&s, l); done && i != len(tc.lines)-1 {
					t.Fatalf("summary ended at line %d of %d", i+1, len(tc.lines))
				}
			}
			if !done || s != tc.want {
				t.Fatalf("got %+v (done %v), want %+v", s, done, tc.want)
			}
		})
	}
}

func TestCheckSummary(t *testing.T) {
	e := handshake.Expect{Group: tls.MLKEM1024, Key: handshake.MLDSA87}
	ok := summary{version: "TLSv1.3", group: "MLKEM1024", sigalg: "mldsa87", verification: "Verification: OK"}
	if err := checkSummary(e, ok, true); err != nil {
		t.Fatal(err)
	}
	if err := checkSummary(e, summary{version: "TLSv1.3", group: "ML-KEM-1024"}, false); err != nil {
		t.Fatalf("a server's summary with the key type name: %v", err)
	}
	for _, tc := range []struct {
		name string
		s    summary
		err  string
	}{
		{"other group", summary{version: "TLSv1.3", group: "X25519MLKEM768", sigalg: "mldsa87", verification: "Verification: OK"}, `negotiated group "X25519MLKEM768", want MLKEM1024`},
		{"unknown group", summary{version: "TLSv1.3", group: "brainpool", sigalg: "mldsa87", verification: "Verification: OK"}, `negotiated group "brainpool"`},
		{"TLS 1.2", summary{version: "TLSv1.2", group: "MLKEM1024", sigalg: "mldsa87", verification: "Verification: OK"}, "want TLSv1.3"},
		{"other signature", summary{version: "TLSv1.3", group: "MLKEM1024", sigalg: "ed25519", verification: "Verification: OK"}, `server signature "ed25519"`},
		{"not verified", summary{version: "TLSv1.3", group: "MLKEM1024", sigalg: "mldsa87", verification: "Verification error: self-signed certificate"}, "Verification: OK"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkSummary(e, tc.s, true)
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("error %v, want one containing %q", err, tc.err)
			}
		})
	}
}

// program returns the cached build's openssl program, or skips like
// harness.
func program(t testing.TB) string {
	t.Helper()
	harness(t) // the same skip and build rule
	root, _ := filepath.Abs("../../..")
	b, err := Cached(root)
	if err != nil {
		t.Fatal(err)
	}
	return b.Program()
}

// cliPair runs one configuration's s_server and returns a client for it.
type cliPair struct {
	addr    string
	results chan handshake.ServerRecord
	done    chan error
	stop    context.CancelFunc
	client  *CLIClient
	keyLog  *bytes.Buffer
}

func startCLI(t *testing.T, bin string, key handshake.CertKey, group tls.CurveID, clientGroups string, exp handshake.Expect) *cliPair {
	t.Helper()
	b, err := handshake.MakeCerts(handshake.CertConfig{Key: key, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	files, err := WriteCerts(dir, b)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cliPair{addr: ln.Addr().String(), results: make(chan handshake.ServerRecord, 16), done: make(chan error, 1), keyLog: &bytes.Buffer{}}
	srv := &CLIServer{Launcher: Native(bin), Args: testServerArgs, Files: files, Groups: ServerGroups(group), Expect: exp, Up: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	p.stop = cancel
	go func() { p.done <- srv.Serve(ctx, ln, func(r handshake.ServerRecord) { p.results <- r }) }()
	select {
	case <-srv.Up:
	case err := <-p.done:
		cancel()
		t.Fatalf("s_server did not come up: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-p.done:
			if err != nil {
				t.Errorf("Serve: %v", err)
			}
		default:
		}
	})
	p.client = &CLIClient{Launcher: Native(bin), Args: testClientArgs, CA: files.CA, Groups: clientGroups, Expect: exp,
		BindIP: "127.0.0.1", KeyDir: dir, KeyLog: p.keyLog, Timeout: 20 * time.Second}
	return p
}

func TestCLIHandshakes(t *testing.T) {
	bin := program(t)
	for _, tc := range []struct {
		key   handshake.CertKey
		group tls.CurveID
		hrr   bool
	}{
		{handshake.Ed25519, tls.X25519, false},
		{handshake.MLDSA87, tls.X25519, false},
		{handshake.Ed25519, tls.MLKEM1024, false},
		{handshake.Ed25519, tls.SecP384r1MLKEM1024, false},
		{handshake.ECDSAP256, tls.X25519MLKEM768, false},
		{handshake.Ed25519, tls.MLKEM1024, true},
	} {
		t.Run(string(tc.key)+"/"+tc.group.String()+map[bool]string{true: "/hrr"}[tc.hrr], func(t *testing.T) {
			exp := handshake.Expect{Group: tc.group, Key: tc.key, HRR: tc.hrr}
			var decoy tls.CurveID
			if tc.hrr {
				decoy = tls.X25519MLKEM768
			}
			p := startCLI(t, bin, tc.key, tc.group, ClientGroups(tc.group, decoy), exp)
			seen := map[string]bool{}
			for i := range 3 {
				rec, err := p.client.Dial(context.Background(), p.addr)
				if err != nil {
					t.Fatalf("connection %d: %v", i, err)
				}
				if rec.Group != tc.group || rec.Key != tc.key || rec.DurationNs <= 0 || rec.Server != p.addr {
					t.Fatalf("connection %d: record %+v", i, rec)
				}
				if seen[rec.Local] {
					t.Fatalf("client port %s used twice", rec.Local)
				}
				seen[rec.Local] = true
				select {
				case sr := <-p.results:
					if sr.Err != nil || sr.Client != "" || sr.DurationNs != -1 {
						t.Fatalf("connection %d: server record %+v", i, sr)
					}
				case <-time.After(10 * time.Second):
					t.Fatalf("connection %d: no server record", i)
				}
			}
			if n := strings.Count(p.keyLog.String(), "CLIENT_HANDSHAKE_TRAFFIC_SECRET "); n != 3 {
				t.Fatalf("key log holds %d client handshake secrets, want 3:\n%s", n, p.keyLog)
			}
		})
	}
}

func TestCLIFaults(t *testing.T) {
	bin := program(t)
	t.Run("unexpected group", func(t *testing.T) {
		// The client is told to expect ML-KEM-1024 but both sides use X25519.
		p := startCLI(t, bin, handshake.Ed25519, tls.X25519, ClientGroups(tls.X25519, 0), handshake.Expect{Group: tls.X25519, Key: handshake.Ed25519})
		p.client.Expect.Group = tls.MLKEM1024
		_, err := p.client.Dial(context.Background(), p.addr)
		if err == nil || !strings.Contains(err.Error(), `negotiated group "X25519", want MLKEM1024`) {
			t.Fatalf("error %v, want the printed group named", err)
		}
		<-p.results
	})
	t.Run("no common group", func(t *testing.T) {
		// OpenSSL's default client groups hold no ML-KEM-1024: the
		// original's client cannot have used them (issue 24, item 4).
		p := startCLI(t, bin, handshake.Ed25519, tls.MLKEM1024, "X25519:P-256", handshake.Expect{Group: tls.MLKEM1024, Key: handshake.Ed25519})
		_, err := p.client.Dial(context.Background(), p.addr)
		if err == nil || !strings.Contains(err.Error(), "exited with exit status 1") {
			t.Fatalf("error %v, want s_client's non-zero exit", err)
		}
		select {
		case sr := <-p.results:
			if sr.Err == nil {
				t.Fatalf("server record %+v, want the failed handshake", sr)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the server reported no failed handshake")
		}
	})
	t.Run("certificate does not verify", func(t *testing.T) {
		p := startCLI(t, bin, handshake.Ed25519, tls.X25519, "X25519", handshake.Expect{Group: tls.X25519, Key: handshake.Ed25519})
		other, err := handshake.MakeCerts(handshake.CertConfig{Key: handshake.Ed25519, Seed: 2})
		if err != nil {
			t.Fatal(err)
		}
		files, err := WriteCerts(t.TempDir(), other)
		if err != nil {
			t.Fatal(err)
		}
		p.client.CA = files.CA
		if _, err := p.client.Dial(context.Background(), p.addr); err == nil || !strings.Contains(err.Error(), "exited with") {
			t.Fatalf("error %v, want s_client's failure", err)
		}
	})
	t.Run("server cannot start", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		srv := &CLIServer{Launcher: Native(bin), Args: testServerArgs, Files: CertFiles{Chain: "/nonexistent/chain.pem", Key: "/nonexistent/key.pem"},
			Groups: "X25519", Expect: handshake.Expect{Group: tls.X25519}, Ready: 5 * time.Second}
		err = srv.Serve(context.Background(), ln, func(handshake.ServerRecord) {})
		if err == nil || !strings.Contains(err.Error(), "exited at start") {
			t.Fatalf("error %v, want the exit at start with its output", err)
		}
	})
	t.Run("server dies mid-run", func(t *testing.T) {
		b, _ := handshake.MakeCerts(handshake.CertConfig{Key: handshake.Ed25519, Seed: 1})
		files, err := WriteCerts(t.TempDir(), b)
		if err != nil {
			t.Fatal(err)
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		started := make(chan *os.Process, 1)
		l := Native(bin)
		l.Start = func(cmd *exec.Cmd) error {
			err := cmd.Start()
			if err == nil {
				started <- cmd.Process
			}
			return err
		}
		srv := &CLIServer{Launcher: l, Args: testServerArgs, Files: files, Groups: "X25519", Expect: handshake.Expect{Group: tls.X25519}}
		done := make(chan error, 1)
		go func() { done <- srv.Serve(context.Background(), ln, func(handshake.ServerRecord) {}) }()
		proc := <-started
		time.Sleep(200 * time.Millisecond) // past its ACCEPT
		proc.Kill()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "exited") {
				t.Fatalf("error %v, want the server's exit", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("Serve did not return after its s_server died")
		}
	})
}

func TestMissingGroups(t *testing.T) {
	offered := ParseTLSGroups("secp256r1:x25519:MLKEM1024:SecP384r1MLKEM1024\n")
	for _, tc := range []struct {
		list string
		want []string
	}{
		{"X25519:MLKEM1024:SecP384r1MLKEM1024", nil},
		{"*X25519MLKEM768:MLKEM1024", []string{"X25519MLKEM768"}},
		{"?X448/x25519", []string{"X448"}},
		{"", nil},
	} {
		if got := MissingGroups(tc.list, offered); !slices.Equal(got, tc.want) {
			t.Errorf("MissingGroups(%q) = %v, want %v", tc.list, got, tc.want)
		}
	}
	if got := GroupList([]tls.CurveID{tls.X25519, tls.MLKEM1024, tls.SecP384r1MLKEM1024}); got != "X25519:MLKEM1024:SecP384r1MLKEM1024" {
		t.Errorf("GroupList = %q", got)
	}
}
