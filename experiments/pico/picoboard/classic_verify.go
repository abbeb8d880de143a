package picoboard

import (
	"bytes"
	"crypto"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/sha256"
	"fmt"
	"math/big"

	"pqrepro/datasets/picodata"
)

func isClassical(scheme string) bool {
	for _, s := range picodata.ClassicalSchemes {
		if s == scheme {
			return true
		}
	}
	return false
}

// classicalFields are the vector fields each classical scheme must print
// (classic.c); rsa-2048's keygen_* fields come only when the profile runs
// an on-device RSA keygen.
var classicalFields = map[string][]string{
	"rsa-2048":   {"n", "e", "p", "q", "d", "msg", "sig"},
	"ecdsa-p256": {"d", "pub", "msg", "sig"},
	"ecdh-p256":  {"d_a", "pub_a", "d_b", "pub_b", "ss"},
}

// VerifyClassical checks a classical scheme's device vector on the host
// with the Go standard library:
//
//   - rsa-2048 (RFC 8017): n = p*q with the key valid (rsa.PrivateKey.
//     Validate: d*e = 1 mod lcm(p-1, q-1)); the device's PKCS#1 v1.5
//     SHA-256 signature of msg verifies (crypto/rsa) and, PKCS#1 v1.5 being
//     deterministic, equals the host's own signature; the signature with
//     one bit flipped is rejected. If the device generated a key
//     (keygen_*), p and q are prime, n = p*q has 2048 bits, e = 65537 and
//     the key validates.
//   - ecdsa-p256 (FIPS 186-4): pub = d*G (crypto/ecdsa's raw key parsers);
//     the signature r||s of SHA-256(msg) verifies; one flipped bit is
//     rejected.
//   - ecdh-p256 (SP 800-56A): pub_a = d_a*G and pub_b = d_b*G, and both
//     sides' ECDH with crypto/ecdh give the device's ss.
func VerifyClassical(scheme string, v map[string][]byte) []picodata.Check {
	var checks []picodata.Check
	add := func(name, lib string, ok bool, detail string) {
		if ok {
			detail = ""
		}
		checks = append(checks, picodata.Check{Scheme: scheme, Name: name, Lib: lib, OK: ok, Detail: detail})
	}
	fields, known := classicalFields[scheme]
	if !known {
		add("scheme known", "-", false, "no host check for "+scheme)
		return checks
	}
	for _, f := range fields {
		if len(v[f]) == 0 {
			add("vector "+f+" present", "-", false, "the run has no complete "+f+" vector")
			return checks
		}
	}
	switch scheme {
	case "rsa-2048":
		verifyRSA(v, add)
	case "ecdsa-p256":
		verifyECDSA(v, add)
	case "ecdh-p256":
		verifyECDH(v, add)
	}
	return checks
}

func flipBit(b []byte) []byte {
	f := append([]byte(nil), b...)
	f[len(f)/2] ^= 1
	return f
}

func verifyRSA(v map[string][]byte, add func(string, string, bool, string)) {
	const lib = "crypto/rsa"
	bi := func(f string) *big.Int { return new(big.Int).SetBytes(v[f]) }
	e := bi("e")
	if !e.IsInt64() || e.Int64() > 1<<31-1 {
		add("public exponent", lib, false, fmt.Sprintf("e = %v does not fit", e))
		return
	}
	pub := &rsa.PublicKey{N: bi("n"), E: int(e.Int64())}
	add("modulus 2048 bits", lib, pub.N.BitLen() == 2048 && len(v["n"]) == 256, fmt.Sprintf("n has %d bits in %d bytes", pub.N.BitLen(), len(v["n"])))
	add("n = p*q", lib, new(big.Int).Mul(bi("p"), bi("q")).Cmp(pub.N) == 0, "p*q differs from the device's n")
	priv := &rsa.PrivateKey{PublicKey: *pub, D: bi("d"), Primes: []*big.Int{bi("p"), bi("q")}}
	err := priv.Validate()
	add("private key valid", lib, err == nil, fmt.Sprint(err))
	h := sha256.Sum256(v["msg"])
	err = rsa.VerifyPKCS1v15(pub, crypto.SHA256, h[:], v["sig"])
	add("verify device signature", lib, err == nil, fmt.Sprint(err))
	err = rsa.VerifyPKCS1v15(pub, crypto.SHA256, h[:], flipBit(v["sig"]))
	add("reject flipped signature", lib, err != nil, "crypto/rsa accepts a corrupted signature")
	if priv.Validate() == nil {
		priv.Precompute()
		sig, err := rsa.SignPKCS1v15(nil, priv, crypto.SHA256, h[:])
		if err != nil {
			add("sign like the device", lib, false, err.Error())
		} else {
			ok, d := same(v["sig"], sig)
			add("sign like the device", lib, ok, d)
		}
	}

	if len(v["keygen_n"]) == 0 {
		return
	}
	for _, f := range []string{"keygen_p", "keygen_q", "keygen_d", "keygen_e"} {
		if len(v[f]) == 0 {
			add("vector "+f+" present", "-", false, "the run has keygen_n but no complete "+f+" vector")
			return
		}
	}
	n, p, q := bi("keygen_n"), bi("keygen_p"), bi("keygen_q")
	add("keygen p prime", "math/big", p.ProbablyPrime(20), "p is composite")
	add("keygen q prime", "math/big", q.ProbablyPrime(20), "q is composite")
	add("keygen n = p*q, 2048 bits", lib, new(big.Int).Mul(p, q).Cmp(n) == 0 && n.BitLen() == 2048,
		fmt.Sprintf("n has %d bits; p*q equal: %v", n.BitLen(), new(big.Int).Mul(p, q).Cmp(n) == 0))
	add("keygen e = 65537", lib, bi("keygen_e").Cmp(big.NewInt(65537)) == 0, fmt.Sprintf("e = %v", bi("keygen_e")))
	kp := &rsa.PrivateKey{PublicKey: rsa.PublicKey{N: n, E: 65537}, D: bi("keygen_d"), Primes: []*big.Int{p, q}}
	err = kp.Validate()
	add("keygen key valid", lib, err == nil, fmt.Sprint(err))
}

func verifyECDSA(v map[string][]byte, add func(string, string, bool, string)) {
	const lib = "crypto/ecdsa"
	priv, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), v["d"])
	if err != nil {
		add("private key", lib, false, "device d: "+err.Error())
		return
	}
	want, _ := priv.PublicKey.Bytes()
	ok, d := same(v["pub"], want)
	add("pub = d*G", lib, ok, d)
	pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), v["pub"])
	if err != nil {
		add("verify device signature", lib, false, "device pub: "+err.Error())
		return
	}
	if len(v["sig"]) != 64 {
		add("signature length", lib, false, fmt.Sprintf("%d bytes, want r||s in 64", len(v["sig"])))
		return
	}
	h := sha256.Sum256(v["msg"])
	verify := func(sig []byte) bool {
		return ecdsa.Verify(pub, h[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:]))
	}
	add("verify device signature", lib, verify(v["sig"]), "crypto/ecdsa rejects the device's signature")
	add("reject flipped signature", lib, !verify(flipBit(v["sig"])), "crypto/ecdsa accepts a corrupted signature")
}

func verifyECDH(v map[string][]byte, add func(string, string, bool, string)) {
	const lib = "crypto/ecdh"
	c := ecdh.P256()
	var keys [2]*ecdh.PrivateKey
	var pubs [2]*ecdh.PublicKey
	for i, side := range []string{"a", "b"} {
		k, err := c.NewPrivateKey(v["d_"+side])
		if err != nil {
			add("private key "+side, lib, false, "device d_"+side+": "+err.Error())
			return
		}
		keys[i] = k
		ok, d := same(v["pub_"+side], k.PublicKey().Bytes())
		add("pub_"+side+" = d_"+side+"*G", lib, ok, d)
		p, err := c.NewPublicKey(v["pub_"+side])
		if err != nil {
			add("public key "+side, lib, false, "device pub_"+side+": "+err.Error())
			return
		}
		pubs[i] = p
	}
	for i, name := range []string{"shared secret of a", "shared secret of b"} {
		ss, err := keys[i].ECDH(pubs[1-i])
		if err != nil {
			add(name, lib, false, err.Error())
			continue
		}
		ok, d := same(v["ss"], ss)
		add(name, lib, ok && bytes.Equal(v["ss"], ss), d)
	}
}
