package picoboard

import (
	"bytes"
	"crypto/mldsa"
	"crypto/mlkem"
	"crypto/mlkem/mlkemtest"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/cloudflare/circl/kem"
	"github.com/cloudflare/circl/kem/mlkem/mlkem1024"
	"github.com/cloudflare/circl/kem/mlkem/mlkem512"
	"github.com/cloudflare/circl/kem/mlkem/mlkem768"
	"github.com/cloudflare/circl/sign"
	"github.com/cloudflare/circl/sign/mldsa/mldsa44"
	"github.com/cloudflare/circl/sign/mldsa/mldsa65"
	"github.com/cloudflare/circl/sign/mldsa/mldsa87"

	"pqrepro/datasets/picodata"
)

// ErrVectorMismatch is returned by VerifyVectors when any check fails.
var ErrVectorMismatch = errors.New("pico: device test vector disagrees with the host")

func circlKEM(name string) kem.Scheme {
	switch name {
	case "ml-kem-512":
		return mlkem512.Scheme()
	case "ml-kem-768":
		return mlkem768.Scheme()
	case "ml-kem-1024":
		return mlkem1024.Scheme()
	}
	return nil
}

func circlDSA(name string) sign.Scheme {
	switch name {
	case "ml-dsa-44":
		return mldsa44.Scheme()
	case "ml-dsa-65":
		return mldsa65.Scheme()
	case "ml-dsa-87":
		return mldsa87.Scheme()
	}
	return nil
}

func stdDSA(name string) (mldsa.Parameters, bool) {
	switch name {
	case "ml-dsa-44":
		return mldsa.MLDSA44(), true
	case "ml-dsa-65":
		return mldsa.MLDSA65(), true
	case "ml-dsa-87":
		return mldsa.MLDSA87(), true
	}
	return mldsa.Parameters{}, false
}

// VerifyVectors re-checks on the host the test vector the firmware printed
// for every post-quantum scheme.
//
// It checks with cloudflare/circl and, where it has the parameter set, Go's
// crypto/mlkem and crypto/mldsa:
//
//   - ML-KEM (FIPS 203): KeyGen from the device's coins (d || z) gives the
//     device's pk and sk; Encaps from its coins m gives its ct and shared
//     secret; Decaps of ct gives the same secret.
//   - ML-DSA (FIPS 204): KeyGen from the device's seed xi gives its pk and
//     sk; the device's signature of its message verifies (empty context);
//     the same signature with one bit flipped does not.
//   - SPHINCS+ round 3.1: circl's FIPS 205 KeyGen from the device's seeds
//     gives its pk and sk, and pqrepro's slhverify (round 3.1 variant)
//     verifies its signature (verifySPHINCS).
//
// Classical schemes (rsa-2048, ecdsa-p256, ecdh-p256) are checked with
// Go's crypto/rsa, crypto/ecdsa and crypto/ecdh by VerifyClassical. The checks come back
// sorted; the error wraps ErrVectorMismatch when one fails or a vector is
// missing.
func VerifyVectors(d *picodata.Dataset) ([]picodata.Check, error) {
	var checks []picodata.Check
	add := func(scheme, name, lib string, ok bool, detail string) {
		checks = append(checks, picodata.Check{Scheme: scheme, Name: name, Lib: lib, OK: ok, Detail: detail})
	}
	for _, scheme := range d.Header.Schemes {
		v := d.Vectors[scheme]
		need := func(fields ...string) bool {
			for _, f := range fields {
				if len(v[f]) == 0 {
					add(scheme, "vector "+f+" present", "-", false, "the run has no complete "+f+" vector")
					return false
				}
			}
			return true
		}
		if ks := circlKEM(scheme); ks != nil {
			if !need("keygen_coins", "encaps_coins", "pk", "sk", "ct", "ss") {
				continue
			}
			verifyKEM(scheme, ks, v, add)
			continue
		}
		if ss := circlDSA(scheme); ss != nil {
			if !need("keygen_seed", "pk", "sk", "msg", "sig") {
				continue
			}
			verifyDSA(scheme, ss, v, add)
			continue
		}
		if _, ok := circlSLH(scheme); ok {
			if !need("keygen_seed", "pk", "sk", "msg", "sig") {
				continue
			}
			verifySPHINCS(scheme, v, add)
			continue
		}
		if isClassical(scheme) {
			checks = append(checks, VerifyClassical(scheme, v)...)
		}
	}
	sort.SliceStable(checks, func(i, j int) bool {
		a, b := checks[i], checks[j]
		if a.Scheme != b.Scheme {
			return a.Scheme < b.Scheme
		}
		if a.Lib != b.Lib {
			return a.Lib < b.Lib
		}
		return a.Name < b.Name
	})
	var bad []string
	for _, c := range checks {
		if !c.OK {
			bad = append(bad, fmt.Sprintf("%s %s (%s): %s", c.Scheme, c.Name, c.Lib, c.Detail))
		}
	}
	if len(bad) > 0 {
		return checks, fmt.Errorf("%w: %s", ErrVectorMismatch, strings.Join(bad, "; "))
	}
	return checks, nil
}

func same(a, b []byte) (bool, string) {
	if bytes.Equal(a, b) {
		return true, ""
	}
	return false, fmt.Sprintf("device %d bytes %x..., host %d bytes %x...", len(a), head(a), len(b), head(b))
}

func head(b []byte) []byte {
	if len(b) > 8 {
		return b[:8]
	}
	return b
}

func verifyKEM(scheme string, ks kem.Scheme, v map[string][]byte, add func(string, string, string, bool, string)) {
	const lib = "circl"
	if len(v["keygen_coins"]) != ks.SeedSize() || len(v["encaps_coins"]) != ks.EncapsulationSeedSize() {
		add(scheme, "coins length", lib, false, fmt.Sprintf("keygen %d encaps %d bytes", len(v["keygen_coins"]), len(v["encaps_coins"])))
		return
	}
	pk, sk := ks.DeriveKeyPair(v["keygen_coins"])
	pkb, _ := pk.MarshalBinary()
	skb, _ := sk.MarshalBinary()
	ok, d := same(v["pk"], pkb)
	add(scheme, "keygen pk", lib, ok, d)
	ok, d = same(v["sk"], skb)
	add(scheme, "keygen sk", lib, ok, d)
	ct, ss, err := ks.EncapsulateDeterministically(pk, v["encaps_coins"])
	if err != nil {
		add(scheme, "encaps", lib, false, err.Error())
		return
	}
	ok, d = same(v["ct"], ct)
	add(scheme, "encaps ct", lib, ok, d)
	ok, d = same(v["ss"], ss)
	add(scheme, "encaps shared secret", lib, ok, d)
	if dsk, err := ks.UnmarshalBinaryPrivateKey(v["sk"]); err != nil {
		add(scheme, "decaps", lib, false, "device sk: "+err.Error())
	} else if ss2, err := ks.Decapsulate(dsk, v["ct"]); err != nil {
		add(scheme, "decaps", lib, false, err.Error())
	} else {
		ok, d = same(v["ss"], ss2)
		add(scheme, "decaps shared secret", lib, ok, d)
	}

	// Go's crypto/mlkem has ML-KEM-768 and ML-KEM-1024.
	const std = "crypto/mlkem"
	switch scheme {
	case "ml-kem-768":
		dk, err := mlkem.NewDecapsulationKey768(v["keygen_coins"])
		if err != nil {
			add(scheme, "keygen", std, false, err.Error())
			return
		}
		ok, d = same(v["pk"], dk.EncapsulationKey().Bytes())
		add(scheme, "keygen pk", std, ok, d)
		ss, ct, err := mlkemtest.Encapsulate768(dk.EncapsulationKey(), v["encaps_coins"])
		stdKEMRest(scheme, v, ss, ct, err, func(c []byte) ([]byte, error) { return dk.Decapsulate(c) }, add)
	case "ml-kem-1024":
		dk, err := mlkem.NewDecapsulationKey1024(v["keygen_coins"])
		if err != nil {
			add(scheme, "keygen", std, false, err.Error())
			return
		}
		ok, d = same(v["pk"], dk.EncapsulationKey().Bytes())
		add(scheme, "keygen pk", std, ok, d)
		ss, ct, err := mlkemtest.Encapsulate1024(dk.EncapsulationKey(), v["encaps_coins"])
		stdKEMRest(scheme, v, ss, ct, err, func(c []byte) ([]byte, error) { return dk.Decapsulate(c) }, add)
	}
}

func stdKEMRest(scheme string, v map[string][]byte, ss, ct []byte, err error, dec func([]byte) ([]byte, error), add func(string, string, string, bool, string)) {
	const std = "crypto/mlkem"
	if err != nil {
		add(scheme, "encaps", std, false, err.Error())
		return
	}
	ok, d := same(v["ct"], ct)
	add(scheme, "encaps ct", std, ok, d)
	ok, d = same(v["ss"], ss)
	add(scheme, "encaps shared secret", std, ok, d)
	ss2, err := dec(v["ct"])
	if err != nil {
		add(scheme, "decaps", std, false, err.Error())
		return
	}
	ok, d = same(v["ss"], ss2)
	add(scheme, "decaps shared secret", std, ok, d)
}

func verifyDSA(scheme string, ss sign.Scheme, v map[string][]byte, add func(string, string, string, bool, string)) {
	const lib = "circl"
	if len(v["keygen_seed"]) != ss.SeedSize() {
		add(scheme, "seed length", lib, false, fmt.Sprintf("%d bytes", len(v["keygen_seed"])))
		return
	}
	pk, sk := ss.DeriveKey(v["keygen_seed"])
	pkb, _ := pk.MarshalBinary()
	skb, _ := sk.MarshalBinary()
	ok, d := same(v["pk"], pkb)
	add(scheme, "keygen pk", lib, ok, d)
	ok, d = same(v["sk"], skb)
	add(scheme, "keygen sk", lib, ok, d)
	dpk, err := ss.UnmarshalBinaryPublicKey(v["pk"])
	if err != nil {
		add(scheme, "verify", lib, false, "device pk: "+err.Error())
	} else {
		add(scheme, "verify device signature", lib, ss.Verify(dpk, v["msg"], v["sig"], nil), "circl rejects the device's signature")
		flipped := append([]byte(nil), v["sig"]...)
		flipped[len(flipped)/2] ^= 1
		add(scheme, "reject flipped signature", lib, !ss.Verify(dpk, v["msg"], flipped, nil), "circl accepts a corrupted signature")
	}

	const std = "crypto/mldsa"
	params, _ := stdDSA(scheme)
	priv, err := mldsa.NewPrivateKey(params, v["keygen_seed"])
	if err != nil {
		add(scheme, "keygen", std, false, err.Error())
		return
	}
	ok, d = same(v["pk"], priv.PublicKey().Bytes())
	add(scheme, "keygen pk", std, ok, d)
	spk, err := mldsa.NewPublicKey(params, v["pk"])
	if err != nil {
		add(scheme, "verify", std, false, "device pk: "+err.Error())
		return
	}
	err = mldsa.Verify(spk, v["msg"], v["sig"], nil)
	add(scheme, "verify device signature", std, err == nil, fmt.Sprint(err))
}
