package openssl

import (
	"bufio"
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// The host's cryptography, measured: what decides how fast the handshakes'
// primitives run on this CPU. The same code measures a 2x different
// hybrid cost on two CPUs of one machine kind, because P-384 runs on
// OpenSSL's generic prime-field Montgomery code (Configure leaves
// ec_nistp_64_gcc_128 disabled by default), whose bignum assembly takes
// the MULX/ADCX/ADOX paths only where the CPU has BMI2 and ADX, while
// ML-KEM and ML-DSA are portable C in 3.5 (crypto/ml_kem, crypto/ml_dsa,
// no assembly). So every run records, from the build's own openssl
// program: OpenSSL's view of the CPU (`openssl info -cpusettings`, its
// OPENSSL_ia32cap words) and the speed of each primitive the paper's
// configurations use (`openssl speed -seconds 1 -elapsed`), once before
// and once after its handshakes, so that a change of the host's speed
// within the run shows.

// SpeedArgs are the openssl speed arguments: one second per primitive,
// wall-clock time (-elapsed: the figure a handshake experiences).
var SpeedArgs = []string{"speed", "-seconds", "1", "-elapsed", "ecdhp384", "ecdhx25519", "ed25519", "ML-KEM-1024", "ML-KEM-768", "ML-DSA-87"}

// Implementations says which code computes each primitive in the build
// (ConfigureArgs, OpenSSL 3.5's sources).
var Implementations = map[string]string{
	"P-384":  "generic GF(p) Montgomery arithmetic (EC_GFp_mont_method; ec_nistp_64_gcc_128 disabled by Configure's default), x86_64 bignum assembly with MULX/ADCX/ADOX when the CPU has BMI2 and ADX",
	"X25519": "crypto/ec/curve25519.c (64-bit C, x86_64 assembly with MULX/ADX when available)",
	"ML-KEM": "portable C (crypto/ml_kem), no assembly",
	"ML-DSA": "portable C (crypto/ml_dsa), no assembly",
}

// HostCrypto is one measurement of the host's cryptography.
type HostCrypto struct {
	At          time.Time `json:"at"`
	Command     string    `json:"command"`
	CPUSettings string    `json:"cpu_settings"` // openssl info -cpusettings
	// OpsPerSecond by primitive and operation ("ecdh-p384", "mlkem1024-encaps", ...).
	OpsPerSecond map[string]float64 `json:"ops_per_second"`
	// MsPerOp is 1000 / OpsPerSecond, rounded to the microsecond.
	MsPerOp map[string]float64 `json:"ms_per_op"`
}

// MeasureHost runs the openssl program bin's info and speed commands.
func MeasureHost(ctx context.Context, bin string) (*HostCrypto, error) {
	h := &HostCrypto{At: time.Now().UTC(), Command: "openssl " + strings.Join(SpeedArgs, " ")}
	out, err := exec.CommandContext(ctx, bin, "info", "-cpusettings").Output()
	if err != nil {
		return nil, fmt.Errorf("openssl info -cpusettings: %w", err)
	}
	h.CPUSettings = strings.TrimSpace(string(out))
	if out, err = runSpeed(ctx, bin); err != nil {
		return nil, fmt.Errorf("%s: %w", h.Command, err)
	}
	if h.OpsPerSecond, err = ParseSpeed(string(out)); err != nil {
		return nil, fmt.Errorf("%s: %w", h.Command, err)
	}
	h.MsPerOp = map[string]float64{}
	for k, v := range h.OpsPerSecond {
		if v > 0 {
			h.MsPerOp[k] = float64(int64(1e6/v+0.5)) / 1000
		}
	}
	return h, nil
}

// runSpeed runs openssl speed with SpeedArgs and returns its standard
// output (the tables; progress goes to standard error).
func runSpeed(ctx context.Context, bin string) ([]byte, error) {
	return exec.CommandContext(ctx, bin, SpeedArgs...).Output()
}

var (
	// " 384 bits ecdh (nistp384)   0.0010s    994.2"
	ecdhLine = regexp.MustCompile(`^\s*\d+ bits ecdh \(([^)]+)\)\s+[\d.]+s\s+([\d.]+)\s*$`)
	// " 253 bits EdDSA (Ed25519)   0.0000s   0.0001s  40000.0  14000.0"
	eddsaLine = regexp.MustCompile(`^\s*\d+ bits EdDSA \(([^)]+)\)\s+[\d.]+s\s+[\d.]+s\s+([\d.]+)\s+([\d.]+)\s*$`)
	// "ML-KEM-1024 0.000030s 0.000030s 0.000040s 33000.0 33000.0 25000.0"
	// (KEMs: keygen, encaps, decaps; signatures: keygen, sign, verify)
	tripleLine = regexp.MustCompile(`^\s*(ML-KEM-\d+|ML-DSA-\d+)\s+[\d.]+s\s+[\d.]+s\s+[\d.]+s\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s*$`)
)

// ParseSpeed reads openssl speed's human-readable tables into operations
// per second. It fails when a line of a known table does not parse or
// when nothing was found.
func ParseSpeed(out string) (map[string]float64, error) {
	ops := map[string]float64{}
	num := func(s string) float64 { v, _ := strconv.ParseFloat(s, 64); return v }
	key := func(s string) string { return strings.ToLower(strings.ReplaceAll(s, "-", "")) }
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		l := sc.Text()
		if m := ecdhLine.FindStringSubmatch(l); m != nil {
			name := strings.TrimPrefix(strings.ToLower(m[1]), "nist")
			ops["ecdh-"+name] = num(m[2])
		} else if m := eddsaLine.FindStringSubmatch(l); m != nil {
			ops[key(m[1])+"-sign"], ops[key(m[1])+"-verify"] = num(m[2]), num(m[3])
		} else if m := tripleLine.FindStringSubmatch(l); m != nil {
			ops1 := []string{"keygen", "encaps", "decaps"}
			if strings.HasPrefix(m[1], "ML-DSA") {
				ops1 = []string{"keygen", "sign", "verify"}
			}
			for i, o := range ops1 {
				ops[key(m[1])+"-"+o] = num(m[2+i])
			}
		}
	}
	if len(ops) == 0 {
		return nil, fmt.Errorf("no result line in its output (%d bytes)", len(out))
	}
	return ops, nil
}
