package tlshost

import (
	"math"
	"strings"
	"testing"
)

// TestConfigCPUMs: the gap model's CPU term agrees with the host account
// (the hybrid minus ML-KEM-1024 is 3 P-384 operations direct, 4 after an
// HRR), adds the signature's sign and verify and one verify per chain
// certificate, and names what is missing.
func TestConfigCPUMs(t *testing.T) {
	speed := func(p384 float64) *Speed {
		return &Speed{MsPerOp: map[string]float64{"ecdh-p384": p384, "ecdh-x25519": 0.04, "mlkem1024-keygen": 0.03, "mlkem1024-encaps": 0.035, "mlkem1024-decaps": 0.045, "mldsa87-sign": 0.4}}
	}
	ms := MsPerOp(&CryptoMeta{Before: speed(1.65), After: speed(1.69)})
	if math.Abs(ms["ecdh-p384"]-1.67) > 1e-9 {
		t.Fatalf("mean P-384 %v, want the mean of before and after, 1.67", ms["ecdh-p384"])
	}
	if MsPerOp(nil) != nil || MsPerOp(&CryptoMeta{}) != nil {
		t.Error("no measurement: want no speeds")
	}
	ms["ed25519-sign"], ms["ed25519-verify"], ms["mldsa87-verify"] = 0.02, 0.05, 0.3
	cpu := func(cert, group string, hrr bool, chain int) float64 {
		t.Helper()
		v, err := ConfigCPUMs(ms, cert, group, hrr, chain)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, tc := range []struct {
		hrr bool
		ops float64
	}{{false, 3}, {true, 4}} {
		d := cpu("ed25519", "SecP384r1MLKEM1024", tc.hrr, 0) - cpu("ed25519", "MLKEM1024", tc.hrr, 0)
		if math.Abs(d-tc.ops*ms["ecdh-p384"]) > 1e-9 {
			t.Errorf("hrr %v: hybrid - ML-KEM-1024 = %v ms, want %v x P-384 = %v", tc.hrr, d, tc.ops, tc.ops*ms["ecdh-p384"])
		}
	}
	if got, want := cpu("ed25519", "X25519", false, 0), 3*ms["ecdh-x25519"]+ms["ed25519-sign"]+ms["ed25519-verify"]; math.Abs(got-want) > 1e-9 {
		t.Errorf("baseline %v ms, want %v", got, want)
	}
	if got, want := cpu("mldsa87", "X25519", false, 1)-cpu("mldsa87", "X25519", false, 0), ms["mldsa87-verify"]; math.Abs(got-want) > 1e-9 {
		t.Errorf("a CA in the chain adds %v ms, want one ML-DSA-87 verify %v", got, want)
	}
	for _, tc := range []struct{ cert, group, want string }{
		{"ecdsa-p256", "X25519", "no CPU account"},
		{"ed25519", "SecP256r1MLKEM768", "no CPU account"},
	} {
		if _, err := ConfigCPUMs(ms, tc.cert, tc.group, false, 0); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s/%s: %v", tc.cert, tc.group, err)
		}
	}
	delete(ms, "mldsa87-sign")
	if _, err := ConfigCPUMs(ms, "mldsa87", "X25519", false, 0); err == nil || !strings.Contains(err.Error(), "SpeedArgs") {
		t.Errorf("without an ML-DSA-87 speed: %v", err)
	}
}

func TestSignMs(t *testing.T) {
	ms := map[string]float64{"mldsa87-sign": 1.4, "ed25519-sign": 0}
	if v, err := SignMs(ms, "mldsa87"); err != nil || v != 1.4 {
		t.Errorf("ML-DSA-87: %v, %v; want 1.4", v, err)
	}
	if _, err := SignMs(ms, "ed25519"); err == nil || !strings.Contains(err.Error(), "ed25519-sign") {
		t.Errorf("a zero figure: err %v; want the missing figure named", err)
	}
	if _, err := SignMs(ms, "rsa"); err == nil || !strings.Contains(err.Error(), "no CPU account") {
		t.Errorf("an unknown key: err %v", err)
	}
}
