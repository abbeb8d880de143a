package tlshost

import (
	"fmt"
	"maps"
	"slices"
)

// CryptoMeta is the part of meta.json's measured.host_crypto the
// analysis reads.
type CryptoMeta struct {
	Before *Speed `json:"before"`
	After  *Speed `json:"after"`
	// Implementations names the code that computes each primitive.
	Implementations map[string]string `json:"implementations"`
	Errors          []string          `json:"errors"`
}

// Speed is one `openssl speed` measurement.
type Speed struct {
	MsPerOp     map[string]float64 `json:"ms_per_op"`
	CPUSettings string             `json:"cpu_settings"`
}

// MsPerOp is the host's time per `openssl speed` operation; nil
// without host_crypto. It is the mean of the measurements before and after
// of each operation (the one that exists when only one was measured).
func MsPerOp(hc *CryptoMeta) map[string]float64 {
	if hc == nil {
		return nil
	}
	sum, n := map[string]float64{}, map[string]int{}
	for _, s := range []*Speed{hc.Before, hc.After} {
		if s == nil {
			continue
		}
		for k, v := range s.MsPerOp {
			sum[k] += v
			n[k]++
		}
	}
	if len(sum) == 0 {
		return nil
	}
	out := map[string]float64{}
	for k, v := range sum {
		out[k] = v / float64(n[k])
	}
	return out
}

// P384Ops is the number of ECDH scalar multiplications inside Ths: 3 with
// a direct key share, 4 after a HelloRetryRequest.
//
// The server's key generation and each side's derivation are inside Ths;
// the client's first key generation precedes the ClientHello (RFC 8446
// 4.1.2); after an HRR the client's second one is inside (4.1.4). The
// count holds for the ECDH part of any group (ConfigCPUMs uses it for
// X25519 too).
func P384Ops(hrr bool) int {
	if hrr {
		return 4
	}
	return 3
}

// kexParts are the `openssl speed` primitives of each group: an ECDH
// part (one key generation and one derivation per side, each one
// "ecdh-<curve>" operation, as in the package comment's account) and a KEM part
// ("<kem>-keygen", "-encaps", "-decaps"); a hybrid has both
// (draft-ietf-tls-ecdhe-mlkem).
var kexParts = map[string]struct{ ecdh, kem string }{
	"X25519":             {ecdh: "ecdh-x25519"},
	"MLKEM1024":          {kem: "mlkem1024"},
	"X25519MLKEM768":     {ecdh: "ecdh-x25519", kem: "mlkem768"},
	"SecP384r1MLKEM1024": {ecdh: "ecdh-p384", kem: "mlkem1024"},
}

// sigPrimitive is the `openssl speed` name of each certificate key's
// signature ("<name>-sign", "<name>-verify").
var sigPrimitive = map[string]string{"ed25519": "ed25519", "mldsa87": "mldsa87"}

// ConfigCPUMs is the host's predicted cryptographic time inside Ths of
// one configuration, the CPU term of the gap model (analysis/gapmodel).
// By the account in the package comment, Ths holds the server's key generation, each
// side's derivation or the encapsulation and decapsulation, and after a
// HelloRetryRequest the client's second key generation; the server's
// CertificateVerify signature and the client's verification of it
// (RFC 8446 4.4.3); and chainVerifies more verifications, the
// certificate signatures the client checks (0 for a self-signed leaf
// that the client does not trust, 1 for a leaf signed by a CA of the same
// algorithm):
//
//	ecdh: (3 direct, 4 HRR) x ms["ecdh-<curve>"]
//	kem:  ms["<kem>-encaps"] + ms["<kem>-decaps"] (+ ms["<kem>-keygen"] after an HRR)
//	sig:  ms["<sig>-sign"] + (1 + chainVerifies) x ms["<sig>-verify"]
//
// msPerOp is MsPerOp's map. A group or key without speed figures is
// an error naming what to add to the runner's `openssl speed` arguments.
func ConfigCPUMs(msPerOp map[string]float64, certKey, group string, hrr bool, chainVerifies int) (float64, error) {
	op := func(name string) (float64, error) { return speedFigure(msPerOp, name, certKey+"/"+group) }
	parts, ok := kexParts[group]
	if !ok {
		return 0, fmt.Errorf("group %q has no CPU account (one of %v)", group, slices.Sorted(maps.Keys(kexParts)))
	}
	sig, ok := sigPrimitive[certKey]
	if !ok {
		return 0, fmt.Errorf("certificate key %q has no CPU account (one of %v)", certKey, slices.Sorted(maps.Keys(sigPrimitive)))
	}
	if chainVerifies < 0 {
		return 0, fmt.Errorf("%d chain verifications: want 0 or more", chainVerifies)
	}
	total := 0.0
	add := func(name string, times float64) error {
		v, err := op(name)
		total += times * v
		return err
	}
	var errs []error
	if parts.ecdh != "" {
		errs = append(errs, add(parts.ecdh, float64(P384Ops(hrr))))
	}
	if parts.kem != "" {
		errs = append(errs, add(parts.kem+"-encaps", 1), add(parts.kem+"-decaps", 1))
		if hrr {
			errs = append(errs, add(parts.kem+"-keygen", 1))
		}
	}
	errs = append(errs, add(sig+"-sign", 1), add(sig+"-verify", float64(1+chainVerifies)))
	for _, err := range errs {
		if err != nil {
			return 0, err
		}
	}
	return total, nil
}

// SignMs is one signature with certKey by the host's `openssl speed`.
//
// It is the server's CertificateVerify (RFC 8446 4.4.3), which the gap
// model's second registration overlaps with a window stall.
func SignMs(msPerOp map[string]float64, certKey string) (float64, error) {
	sig, ok := sigPrimitive[certKey]
	if !ok {
		return 0, fmt.Errorf("certificate key %q has no CPU account (one of %v)", certKey, slices.Sorted(maps.Keys(sigPrimitive)))
	}
	return speedFigure(msPerOp, sig+"-sign", certKey)
}

// speedFigure is msPerOp[name], or an error naming what it was for and
// what to add to the runner's `openssl speed` arguments.
func speedFigure(msPerOp map[string]float64, name, what string) (float64, error) {
	v, ok := msPerOp[name]
	if !ok || !(v > 0) {
		return 0, fmt.Errorf("no `openssl speed` figure %q for %s: add the primitive to the runner's speed arguments (experiments/tls/openssl, SpeedArgs)", name, what)
	}
	return v, nil
}
