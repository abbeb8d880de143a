package picoboard

import (
	"bytes"
	"fmt"

	"github.com/cloudflare/circl/sign/slhdsa"

	"pqrepro/experiments/pico/slhverify"
)

// circlSLH maps a SPHINCS+ set of the firmware to circl's FIPS 205
// parameter set with the same hashes and dimensions.
func circlSLH(scheme string) (slhdsa.ID, bool) {
	switch scheme {
	case "sphincs-sha2-128f":
		return slhdsa.SHA2_128f, true
	case "sphincs-shake-128f":
		return slhdsa.SHAKE_128f, true
	case "sphincs-sha2-128s":
		return slhdsa.SHA2_128s, true
	}
	return 0, false
}

// verifySPHINCS re-checks a SPHINCS+ round 3.1 test vector of the device
// with code independent of the PQClean C it ran:
//
//   - key generation is the same in round 3.1 and FIPS 205 (Algorithm 18,
//     slh_keygen_internal: PK.root is the top XMSS tree's root), so
//     circl's FIPS 205 GenerateKey, fed the device's SK.seed || SK.prf ||
//     PK.seed, must give the device's pk and sk;
//   - the device's signature of its message must verify under pqrepro's
//     slhverify in its round 3.1 variant, and not with one bit flipped;
//   - the same signature must not verify as FIPS 205 (circl): round 3.1
//     signs M itself and reads the FORS indices LSB first, FIPS 205 signs
//     0x00 || 0x00 || M and reads them big-endian. A device signature that
//     FIPS 205 accepted would mean the firmware is not running the code
//     this study says it runs.
func verifySPHINCS(scheme string, v map[string][]byte, add func(string, string, string, bool, string)) {
	const (
		circlLib = "circl (FIPS 205)"
		ourLib   = "pqrepro slhverify (round 3.1)"
	)
	id, ok := circlSLH(scheme)
	params, err := slhverify.ParamsByName(id.String())
	if !ok || err != nil {
		add(scheme, "parameter set", "-", false, fmt.Sprintf("no host implementation for %s (%v)", scheme, err))
		return
	}
	seed := v["keygen_seed"]
	if len(seed) != 3*params.N {
		add(scheme, "seed length", circlLib, false, fmt.Sprintf("%d bytes, want %d (SK.seed || SK.prf || PK.seed)", len(seed), 3*params.N))
		return
	}
	pub, priv, err := slhdsa.GenerateKey(bytes.NewReader(seed), id)
	if err != nil {
		add(scheme, "keygen", circlLib, false, err.Error())
		return
	}
	pkb, _ := pub.MarshalBinary()
	skb, _ := priv.MarshalBinary()
	okPK, d := same(v["pk"], pkb)
	add(scheme, "keygen pk", circlLib, okPK, d)
	ok, d = same(v["sk"], skb)
	add(scheme, "keygen sk", circlLib, ok, d)

	err = slhverify.Verify(params, slhverify.Round31, v["pk"], v["msg"], nil, v["sig"])
	add(scheme, "verify device signature", ourLib, err == nil, fmt.Sprint(err))
	flipped := append([]byte(nil), v["sig"]...)
	if len(flipped) > 0 {
		flipped[len(flipped)/2] ^= 1
	}
	err = slhverify.Verify(params, slhverify.Round31, v["pk"], v["msg"], nil, flipped)
	add(scheme, "reject flipped signature", ourLib, err != nil, "a corrupted signature verifies")

	var dpk slhdsa.PublicKey
	if okPK {
		dpk = pub
		fips := slhdsa.Verify(&dpk, slhdsa.NewMessage(v["msg"]), v["sig"], nil)
		add(scheme, "not a FIPS 205 signature", circlLib, !fips, "FIPS 205 accepts the device's signature: the firmware does not run SPHINCS+ round 3.1")
	}
}
