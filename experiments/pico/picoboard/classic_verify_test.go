package picoboard

import (
	"crypto"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"errors"
	"flag"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"pqrepro/datasets/picodata"
	"pqrepro/internal/atomicfile"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// classicVectors makes the vectors a correct classic image prints, with
// the Go standard library (RSA from DeviceRSAKey, as the firmware's key).
func classicVectors(t testing.TB, keygen bool) *picodata.Dataset {
	t.Helper()
	cacheMu.Lock()
	defer cacheMu.Unlock()
	if cached[keygen] == nil {
		cached[keygen] = makeClassicVectors(t, keygen)
	}
	d := &picodata.Dataset{Header: cached[keygen].Header, Vectors: map[string]map[string][]byte{}}
	for s, fs := range cached[keygen].Vectors {
		d.Vectors[s] = map[string][]byte{}
		for f, b := range fs {
			d.Vectors[s][f] = append([]byte(nil), b...)
		}
	}
	return d
}

var (
	cacheMu sync.Mutex
	cached  = map[bool]*picodata.Dataset{}
)

func makeClassicVectors(t testing.TB, keygen bool) *picodata.Dataset {
	d := &picodata.Dataset{Header: picodata.Header{Schemes: picodata.ClassicalSchemes}, Vectors: map[string]map[string][]byte{}}
	k, err := DeviceRSAKey(DefaultSeed)
	if err != nil {
		t.Fatal(err)
	}
	msg := []byte("a 32-byte message for the tests.")
	h := sha256.Sum256(msg)
	sig, err := rsa.SignPKCS1v15(nil, k, crypto.SHA256, h[:])
	if err != nil {
		t.Fatal(err)
	}
	b := func(x *big.Int, n int) []byte { return x.FillBytes(make([]byte, n)) }
	d.Vectors["rsa-2048"] = map[string][]byte{"n": b(k.N, 256), "e": {1, 0, 1}, "p": b(k.Primes[0], 128),
		"q": b(k.Primes[1], 128), "d": b(k.D, 256), "msg": msg, "sig": sig}
	if keygen {
		k2, err := DeviceRSAKey(DefaultSeed + 1)
		if err != nil {
			t.Fatal(err)
		}
		for f, x := range map[string][]byte{"keygen_n": b(k2.N, 256), "keygen_p": b(k2.Primes[0], 128),
			"keygen_q": b(k2.Primes[1], 128), "keygen_d": b(k2.D, 256), "keygen_e": {0, 1, 0, 1}} {
			d.Vectors["rsa-2048"][f] = x
		}
	}

	ek, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	r, s, err := ecdsa.Sign(rand.Reader, ek, h[:])
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := ek.Bytes()
	pub, _ := ek.PublicKey.Bytes()
	d.Vectors["ecdsa-p256"] = map[string][]byte{"d": raw, "pub": pub, "msg": msg, "sig": append(b(r, 32), b(s, 32)...)}

	a, _ := ecdh.P256().GenerateKey(rand.Reader)
	bb, _ := ecdh.P256().GenerateKey(rand.Reader)
	ss, _ := a.ECDH(bb.PublicKey())
	d.Vectors["ecdh-p256"] = map[string][]byte{"d_a": a.Bytes(), "pub_a": a.PublicKey().Bytes(),
		"d_b": bb.Bytes(), "pub_b": bb.PublicKey().Bytes(), "ss": ss}
	return d
}

func TestVerifyClassical(t *testing.T) {
	for _, keygen := range []bool{false, true} {
		checks, err := VerifyVectors(classicVectors(t, keygen))
		if err != nil {
			t.Fatal(err)
		}
		libs := map[string]int{}
		for _, c := range checks {
			libs[c.Lib]++
		}
		want := 6 + 3 + 4
		if keygen {
			want += 5
		}
		if libs["crypto/rsa"] == 0 || libs["crypto/ecdsa"] != 3 || libs["crypto/ecdh"] != 4 || len(checks) != want {
			t.Errorf("keygen=%v: %d checks %v", keygen, len(checks), libs)
		}
	}
}

// TestVerifyClassicalFlippedBit flips one bit in every field of every
// classical vector: each must fail host verification.
func TestVerifyClassicalFlippedBit(t *testing.T) {
	base := classicVectors(t, true)
	for _, scheme := range picodata.ClassicalSchemes {
		for field := range base.Vectors[scheme] {
			for _, pos := range []int{0, -1} { // first byte and last byte
				t.Run(fmt.Sprintf("%s/%s/%d", scheme, field, pos), func(t *testing.T) {
					d := classicVectors(t, true)
					v := d.Vectors[scheme][field]
					i := pos
					if i < 0 {
						i = len(v) - 1
					}
					bit := byte(0x01)
					if i == 0 {
						bit = 0x40 // a high bit, below the RSA primes' forced top bits
					}
					v[i] ^= bit
					if _, err := VerifyVectors(d); !errors.Is(err, ErrVectorMismatch) {
						t.Fatalf("a flipped bit in %s/%s byte %d passed: %v", scheme, field, i, err)
					}
				})
			}
		}
	}
}

func TestVerifyClassicalMissingOrBad(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(v map[string]map[string][]byte)
		want   string
	}{
		{"missing sig", func(v map[string]map[string][]byte) { delete(v["rsa-2048"], "sig") }, "no complete sig"},
		{"missing ss", func(v map[string]map[string][]byte) { delete(v["ecdh-p256"], "ss") }, "no complete ss"},
		{"missing keygen_p", func(v map[string]map[string][]byte) { delete(v["rsa-2048"], "keygen_p") }, "no complete keygen_p"},
		{"short ecdsa sig", func(v map[string]map[string][]byte) { v["ecdsa-p256"]["sig"] = v["ecdsa-p256"]["sig"][:63] }, "64"},
		{"short ecdsa d", func(v map[string]map[string][]byte) { v["ecdsa-p256"]["d"] = v["ecdsa-p256"]["d"][:31] }, "device d"},
		{"off-curve pub_b", func(v map[string]map[string][]byte) { v["ecdh-p256"]["pub_b"][64] ^= 2 }, "pub_b"},
		{"huge e", func(v map[string]map[string][]byte) { v["rsa-2048"]["e"] = make([]byte, 9); v["rsa-2048"]["e"][0] = 1 }, "does not fit"},
		{"composite keygen p", func(v map[string]map[string][]byte) {
			p := v["rsa-2048"]["keygen_p"]
			p[len(p)-1] &^= 1 // even
		}, "composite"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := classicVectors(t, true)
			tc.mutate(d.Vectors)
			_, err := VerifyVectors(d)
			if !errors.Is(err, ErrVectorMismatch) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want mention of %q", err, tc.want)
			}
		})
	}
	if c := VerifyClassical("dsa-1024", nil); len(c) != 1 || c[0].OK {
		t.Errorf("unknown scheme: %+v", c)
	}
}

// TestDeviceRSAKey pins the key derivation with a golden file: the
// firmware's signing key must not change silently.
func TestDeviceRSAKey(t *testing.T) {
	k, err := DeviceRSAKey(DefaultSeed)
	if err != nil {
		t.Fatal(err)
	}
	k2, _ := DeviceRSAKey(DefaultSeed)
	k3, _ := DeviceRSAKey(DefaultSeed + 1)
	if k.N.Cmp(k2.N) != 0 || k.N.Cmp(k3.N) == 0 {
		t.Fatal("the derivation is not a function of the seed")
	}
	if k.N.BitLen() != 2048 || k.E != 65537 || !k.Primes[0].ProbablyPrime(20) {
		t.Fatalf("bad key: %d bits e=%d", k.N.BitLen(), k.E)
	}
	hdr := rsaKeyHeader(k, DefaultSeed)
	sum := sha256.Sum256(hdr)
	got := fmt.Sprintf("seed 0x%x\nn %x\nrsa_key.h sha256 %x\n", uint64(DefaultSeed), k.N.Bytes(), sum)
	golden := filepath.Join("testdata", "device_rsa_key.golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := atomicfile.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -run TestDeviceRSAKey -update)", err)
	}
	if string(want) != got {
		t.Errorf("DeviceRSAKey(DefaultSeed) changed; if on purpose, bump rsaKeyLabel and run with -update\ngot  %s\nwant %s", got, want)
	}
	if !strings.Contains(string(hdr), "RSA_KEY_E[3] = {\n    0x01, 0x00, 0x01,") {
		t.Errorf("header E: %s", hdr[len(hdr)-120:])
	}
}

func BenchmarkDeviceRSAKey(b *testing.B) {
	for i := 0; i < b.N; i++ {
		if _, err := DeviceRSAKey(uint64(i)); err != nil {
			b.Fatal(err)
		}
	}
}
