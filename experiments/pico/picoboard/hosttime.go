package picoboard

import (
	"bytes"
	"cmp"
	"context"
	"crypto"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/mldsa"
	"crypto/mlkem"
	crand "crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/cloudflare/circl/sign/slhdsa"

	"pqrepro/datasets/picodata"
)

// HostConfig configures HostTimings.
type HostConfig struct {
	Profile Profile  // repetition counts; the zero Profile means QuickProfile
	Schemes []string // nil means all nine (KEMSchemes, DSASchemes, ClassicalSchemes)
	Seed    uint64   // seeds keys and messages where the library takes a seed; 0 means DefaultSeed
	// MsgBytes is the length of every signed message, as the firmware's
	// message_bytes; 0 means DefaultMessageBytes.
	MsgBytes int
	// Clock reads the monotonic clock around each operation; nil means
	// time.Now. Tests inject a fake one.
	Clock    func() time.Time
	Progress io.Writer // one line per scheme/op/library when not nil
}

// hostOp is one timed operation: prepare makes the inputs of repetition i
// (untimed), and the function it returns is the operation itself.
type hostOp struct {
	scheme, op, lib string
	reps            func(Profile) int
	prepare         func(i int) (func() error, error)
}

// msgFor returns repetition i's 32 bytes, a function of the seed.
func msgFor(seed uint64, label string, i int) []byte {
	return msgN(seed, label, i, 32)
}

// msgN returns repetition i's n bytes (msgFor's 32, continued), a
// function of the seed.
func msgN(seed uint64, label string, i, n int) []byte {
	var s [32]byte
	binary.LittleEndian.PutUint64(s[:], seed)
	copy(s[8:], label)
	binary.LittleEndian.PutUint64(s[24:], uint64(i))
	r := rand.NewChaCha8(sha256.Sum256(s[:]))
	m := make([]byte, n)
	r.Read(m)
	return m
}

func kemReps(p Profile) int    { return p.KEM }
func dsaKeyReps(p Profile) int { return p.DSAKeygen }
func dsaReps(p Profile) int    { return p.DSASign }
func rsaKeyReps(p Profile) int { return p.RSAKeygen }
func rsaReps(p Profile) int    { return p.RSA }
func eccReps(p Profile) int    { return p.ECC }

func slhKeyReps(p Profile) int { return p.SLHKeygen }

// hostOps lists the host operations for scheme, with the device's op names.
// Keys are made once per scheme (untimed) from the seed; every repetition
// of sign/verify/encaps/decaps/shared uses that key and a fresh message or
// encapsulation.
func hostOps(scheme string, seed uint64, msgBytes int) ([]hostOp, error) {
	var ops []hostOp
	add := func(op, lib string, reps func(Profile) int, prepare func(i int) (func() error, error)) {
		ops = append(ops, hostOp{scheme, op, lib, reps, prepare})
	}
	fixed := func(f func() error) func(int) (func() error, error) {
		return func(int) (func() error, error) { return f, nil }
	}
	seedBytes := func(n int) []byte {
		m := msgFor(seed, scheme+" key seed", 0)
		for len(m) < n {
			m = append(m, msgFor(seed, scheme+" key seed", len(m))...)
		}
		return m[:n]
	}
	if ks := circlKEM(scheme); ks != nil {
		pk, sk := ks.DeriveKeyPair(seedBytes(ks.SeedSize()))
		add("keygen", "circl", kemReps, func(i int) (func() error, error) {
			s := msgFor(seed, "kem keygen", i)
			s = append(s, msgFor(seed, "kem keygen z", i)...)
			return func() error { ks.DeriveKeyPair(s); return nil }, nil
		})
		add("encaps", "circl", kemReps, fixed(func() error { _, _, err := ks.Encapsulate(pk); return err }))
		add("decaps", "circl", kemReps, func(int) (func() error, error) {
			ct, _, err := ks.Encapsulate(pk)
			return func() error { _, err := ks.Decapsulate(sk, ct); return err }, err
		})
		addStdKEM(scheme, seedBytes(64), add)
		return ops, nil
	}
	if ss := circlDSA(scheme); ss != nil {
		pk, sk := ss.DeriveKey(seedBytes(ss.SeedSize()))
		add("keygen", "circl", dsaKeyReps, func(i int) (func() error, error) {
			s := msgFor(seed, "dsa keygen", i)
			return func() error { ss.DeriveKey(s); return nil }, nil
		})
		add("sign", "circl", dsaReps, func(i int) (func() error, error) {
			m := msgN(seed, "dsa msg", i, msgBytes)
			return func() error { ss.Sign(sk, m, nil); return nil }, nil
		})
		add("verify", "circl", dsaReps, func(i int) (func() error, error) {
			m := msgN(seed, "dsa msg", i, msgBytes)
			sig := ss.Sign(sk, m, nil)
			return func() error {
				if !ss.Verify(pk, m, sig, nil) {
					return errors.New("circl rejects its own signature")
				}
				return nil
			}, nil
		})
		params, _ := stdDSA(scheme)
		priv, err := mldsa.NewPrivateKey(params, seedBytes(32))
		if err != nil {
			return nil, err
		}
		add("keygen", "crypto/mldsa", dsaKeyReps, func(i int) (func() error, error) {
			s := msgFor(seed, "dsa keygen", i)
			return func() error { _, err := mldsa.NewPrivateKey(params, s); return err }, nil
		})
		add("sign", "crypto/mldsa", dsaReps, func(i int) (func() error, error) {
			m := msgN(seed, "dsa msg", i, msgBytes)
			return func() error { _, err := priv.Sign(crand.Reader, m, crypto.Hash(0)); return err }, nil
		})
		add("verify", "crypto/mldsa", dsaReps, func(i int) (func() error, error) {
			m := msgN(seed, "dsa msg", i, msgBytes)
			sig, err := priv.Sign(crand.Reader, m, crypto.Hash(0))
			return func() error { return mldsa.Verify(priv.PublicKey(), m, sig, nil) }, err
		})
		return ops, nil
	}
	if id, ok := circlSLH(scheme); ok {
		// circl implements FIPS 205, the device round 3.1: the same hashes,
		// so the same cost (sphincs_verify.go), but not the same bytes.
		const lib = "circl (FIPS 205)"
		_, priv, err := slhdsa.GenerateKey(bytes.NewReader(seedBytes(48)), id)
		if err != nil {
			return nil, err
		}
		signs := func(p Profile) int { return p.SLHSigns(scheme) }
		add("keygen", lib, slhKeyReps, func(i int) (func() error, error) {
			s := append(msgFor(seed, "slh keygen", i), msgFor(seed, "slh keygen 2", i)[:16]...)
			return func() error { _, _, err := slhdsa.GenerateKey(bytes.NewReader(s), id); return err }, nil
		})
		add("sign", lib, signs, func(i int) (func() error, error) {
			m := slhdsa.NewMessage(msgN(seed, "slh msg", i, msgBytes))
			return func() error { _, err := slhdsa.SignDeterministic(&priv, m, nil); return err }, nil
		})
		add("verify", lib, signs, func(i int) (func() error, error) {
			m := slhdsa.NewMessage(msgN(seed, "slh msg", i, msgBytes))
			pub := priv.PublicKey()
			sig, err := slhdsa.SignDeterministic(&priv, m, nil)
			return func() error {
				if !slhdsa.Verify(&pub, m, sig, nil) {
					return errors.New("circl rejects its own SLH-DSA signature")
				}
				return nil
			}, err
		})
		return ops, nil
	}
	switch scheme {
	case "rsa-2048":
		key, err := DeviceRSAKey(seed)
		if err != nil {
			return nil, err
		}
		add("keygen", "crypto/rsa", rsaKeyReps, fixed(func() error { _, err := rsa.GenerateKey(crand.Reader, 2048); return err }))
		add("sign", "crypto/rsa", rsaReps, func(i int) (func() error, error) {
			m := msgN(seed, "rsa msg", i, msgBytes)
			return func() error {
				h := sha256.Sum256(m)
				_, err := rsa.SignPKCS1v15(crand.Reader, key, crypto.SHA256, h[:])
				return err
			}, nil
		})
		add("verify", "crypto/rsa", rsaReps, func(i int) (func() error, error) {
			m := msgN(seed, "rsa msg", i, msgBytes)
			h := sha256.Sum256(m)
			sig, err := rsa.SignPKCS1v15(crand.Reader, key, crypto.SHA256, h[:])
			return func() error {
				h := sha256.Sum256(m)
				return rsa.VerifyPKCS1v15(&key.PublicKey, crypto.SHA256, h[:], sig)
			}, err
		})
	case "ecdsa-p256":
		key, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), p256Scalar(seedBytes(32)))
		if err != nil {
			return nil, err
		}
		add("keygen", "crypto/ecdsa", eccReps, fixed(func() error { _, err := ecdsa.GenerateKey(elliptic.P256(), crand.Reader); return err }))
		add("sign", "crypto/ecdsa", eccReps, func(i int) (func() error, error) {
			m := msgN(seed, "ecdsa msg", i, msgBytes)
			return func() error {
				h := sha256.Sum256(m)
				_, err := ecdsa.SignASN1(crand.Reader, key, h[:])
				return err
			}, nil
		})
		add("verify", "crypto/ecdsa", eccReps, func(i int) (func() error, error) {
			m := msgN(seed, "ecdsa msg", i, msgBytes)
			h := sha256.Sum256(m)
			sig, err := ecdsa.SignASN1(crand.Reader, key, h[:])
			return func() error {
				h := sha256.Sum256(m)
				if !ecdsa.VerifyASN1(&key.PublicKey, h[:], sig) {
					return errors.New("crypto/ecdsa rejects its own signature")
				}
				return nil
			}, err
		})
	case "ecdh-p256":
		c := ecdh.P256()
		a, err := c.NewPrivateKey(p256Scalar(seedBytes(32)))
		if err != nil {
			return nil, err
		}
		add("keygen", "crypto/ecdh", eccReps, fixed(func() error { _, err := c.GenerateKey(crand.Reader); return err }))
		add("shared", "crypto/ecdh", eccReps, func(int) (func() error, error) {
			b, err := c.GenerateKey(crand.Reader)
			if err != nil {
				return nil, err
			}
			pub := b.PublicKey()
			return func() error { _, err := a.ECDH(pub); return err }, nil
		})
		add("exchange", "crypto/ecdh", eccReps, fixed(func() error {
			x, err := c.GenerateKey(crand.Reader)
			if err != nil {
				return err
			}
			y, err := c.GenerateKey(crand.Reader)
			if err != nil {
				return err
			}
			s1, err := x.ECDH(y.PublicKey())
			if err != nil {
				return err
			}
			s2, err := y.ECDH(x.PublicKey())
			if err != nil {
				return err
			}
			if string(s1) != string(s2) {
				return errors.New("crypto/ecdh parties disagree")
			}
			return nil
		}))
	default:
		return nil, fmt.Errorf("host timings: unknown scheme %q (known: %s, %s, %s, %s)", scheme,
			strings.Join(picodata.KEMSchemes, " "), strings.Join(picodata.DSASchemes, " "), strings.Join(picodata.ClassicalSchemes, " "), strings.Join(picodata.SPHINCSSchemes, " "))
	}
	return ops, nil
}

// p256Scalar makes 32 bytes a valid P-256 private key. Clearing the top bit
// keeps it below the group order n (n > 2^255), and a zero becomes one.
func p256Scalar(b []byte) []byte {
	s := append([]byte(nil), b...)
	s[0] &= 0x7f
	s[31] |= 1
	return s
}

// addStdKEM adds Go's crypto/mlkem, which has ML-KEM-768 and ML-KEM-1024.
func addStdKEM(scheme string, seed []byte, add func(string, string, func(Profile) int, func(int) (func() error, error))) {
	const lib = "crypto/mlkem"
	type dk interface {
		Decapsulate([]byte) ([]byte, error)
	}
	var (
		gen   func() error
		encap func() ([]byte, []byte)
		key   dk
	)
	switch scheme {
	case "ml-kem-768":
		k, err := mlkem.NewDecapsulationKey768(seed)
		if err != nil {
			return
		}
		gen = func() error { _, err := mlkem.GenerateKey768(); return err }
		encap, key = k.EncapsulationKey().Encapsulate, k
	case "ml-kem-1024":
		k, err := mlkem.NewDecapsulationKey1024(seed)
		if err != nil {
			return
		}
		gen = func() error { _, err := mlkem.GenerateKey1024(); return err }
		encap, key = k.EncapsulationKey().Encapsulate, k
	default:
		return
	}
	add("keygen", lib, kemReps, func(int) (func() error, error) { return gen, nil })
	add("encaps", lib, kemReps, func(int) (func() error, error) { return func() error { encap(); return nil }, nil })
	add("decaps", lib, kemReps, func(int) (func() error, error) {
		_, ct := encap()
		return func() error { _, err := key.Decapsulate(ct); return err }, nil
	})
}

// HostTimings times every operation of the chosen schemes on this CPU, for
// the host column of Study C's tables.
//
// It uses circl and the Go standard library, cfg.Profile's repetition
// count times each (ML-KEM and the ECC schemes: KEM / ECC; ML-DSA:
// DSAKeygen, DSASign; RSA: RSAKeygen, RSA), for the host column of Study
// C's tables. Each operation runs once untimed first (lazy tables,
// caches), then each repetition's inputs are prepared untimed and only the
// call is timed with cfg.Clock. An operation whose count is 0 (RSA keygen
// in the quick profile) is left out. Results come in scheme, op, library
// order of listing. A failing operation or a cancelled ctx stops the run
// with an error; the timings so far are returned with it.
func HostTimings(ctx context.Context, cfg HostConfig) ([]picodata.HostTiming, error) {
	if cfg.Profile.Name == "" {
		cfg.Profile = QuickProfile
	}
	if cfg.Seed == 0 {
		cfg.Seed = DefaultSeed
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	schemes := cfg.Schemes
	if schemes == nil {
		schemes = append(append(append([]string{}, picodata.KEMSchemes...), picodata.DSASchemes...), picodata.ClassicalSchemes...)
	}
	var out []picodata.HostTiming
	for _, scheme := range schemes {
		ops, err := hostOps(scheme, cfg.Seed, cmp.Or(cfg.MsgBytes, DefaultMessageBytes))
		if err != nil {
			return out, err
		}
		for _, op := range ops {
			n := op.reps(cfg.Profile)
			if n <= 0 {
				continue
			}
			if n > 1_000_000 {
				return out, fmt.Errorf("host timings: %d repetitions of %s %s is not a profile count", n, scheme, op.op)
			}
			warm, err := op.prepare(0)
			if err == nil {
				err = warm()
			}
			if err != nil {
				return out, fmt.Errorf("host timings: %s %s (%s): %w", scheme, op.op, op.lib, err)
			}
			t := picodata.HostTiming{Scheme: scheme, Op: op.op, Lib: op.lib, N: n, Durations: make([]time.Duration, 0, n)}
			for i := 0; i < n; i++ {
				if err := ctx.Err(); err != nil {
					return out, fmt.Errorf("host timings: %s %s interrupted after %d of %d: %w", scheme, op.op, i, n, err)
				}
				f, err := op.prepare(i)
				if err != nil {
					return out, fmt.Errorf("host timings: %s %s (%s) rep %d: %w", scheme, op.op, op.lib, i, err)
				}
				t0 := cfg.Clock()
				err = f()
				d := cfg.Clock().Sub(t0)
				if err != nil {
					return out, fmt.Errorf("host timings: %s %s (%s) rep %d: %w", scheme, op.op, op.lib, i, err)
				}
				t.Durations = append(t.Durations, d)
			}
			out = append(out, t)
			if cfg.Progress != nil {
				fmt.Fprintf(cfg.Progress, "host: %s %s (%s): n=%d mean %v\n", scheme, op.op, op.lib, n, t.Mean())
			}
		}
	}
	return out, nil
}
