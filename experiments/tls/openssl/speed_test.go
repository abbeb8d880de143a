package openssl

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/speed.txt from the cached build's openssl speed")

// TestParseSpeed reads the committed output of the build's openssl speed
// (testdata/speed.txt: SpeedArgs on one host) into the operations the
// runner records.
func TestParseSpeed(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "speed.txt"))
	if err != nil {
		t.Fatal(err)
	}
	ops, err := ParseSpeed(string(raw))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"ecdh-p384", "ecdh-x25519", "ed25519-sign", "ed25519-verify",
		"mlkem1024-keygen", "mlkem1024-encaps", "mlkem1024-decaps", "mlkem768-encaps", "mldsa87-keygen", "mldsa87-sign", "mldsa87-verify"} {
		if ops[k] <= 0 {
			t.Errorf("%s: %v ops/s (all: %v)", k, ops[k], ops)
		}
	}
	if len(ops) != 13 {
		t.Errorf("%d operations, want 13: %v", len(ops), ops)
	}
	for _, bad := range []string{"", "garbage\n", "Doing 384 bits ecdh's for 1s\n"} {
		if _, err := ParseSpeed(bad); err == nil {
			t.Errorf("ParseSpeed(%q) accepted", bad)
		}
	}
}

func FuzzParseSpeed(f *testing.F) {
	raw, _ := os.ReadFile(filepath.Join("testdata", "speed.txt"))
	f.Add(string(raw))
	f.Add(" 384 bits ecdh (nistp384)   0.0010s    994.2\n")
	f.Add("ML-KEM-1024 0.000030s 0.000030s 0.000040s 33000.0 33000.0 25000.0\n")
	f.Fuzz(func(t *testing.T, s string) {
		ops, err := ParseSpeed(s)
		if err == nil && len(ops) == 0 {
			t.Fatal("no error and no operations")
		}
		for k, v := range ops {
			if v < 0 || k == "" {
				t.Fatalf("operation %q = %v", k, v)
			}
		}
	})
}

// TestMeasureHost runs the build's openssl info and speed (about seven
// seconds) and checks what the runner records; -update also rewrites
// testdata/speed.txt from this host's output.
func TestMeasureHost(t *testing.T) {
	bin := program(t)
	h, err := MeasureHost(context.Background(), bin)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(h.CPUSettings, "OPENSSL_ia32cap=") {
		t.Errorf("cpu settings %q", h.CPUSettings)
	}
	if h.MsPerOp["ecdh-p384"] <= 0 || h.MsPerOp["mlkem1024-encaps"] <= 0 {
		t.Errorf("ms per op %v", h.MsPerOp)
	}
	if *update {
		out, err := runSpeed(context.Background(), bin)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join("testdata", "speed.txt"), out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
