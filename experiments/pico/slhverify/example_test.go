package slhverify_test

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/cloudflare/circl/sign/slhdsa"

	"pqrepro/experiments/pico/slhverify"
)

func ExampleVerify() {
	// A FIPS 205 key pair and signature from another implementation
	// (circl), with a deterministic key for a stable example.
	seed := bytes.Repeat([]byte{42}, 3*16) // SK.seed || SK.prf || PK.seed
	pub, priv, _ := slhdsa.GenerateKey(bytes.NewReader(seed), slhdsa.SHA2_128f)
	pk, _ := pub.MarshalBinary()
	msg, ctx := []byte("firmware image v1"), []byte("pico")
	sig, _ := slhdsa.SignDeterministic(&priv, slhdsa.NewMessage(msg), ctx)

	p, err := slhverify.ParamsByName("slh-dsa-sha2-128f")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("valid:", slhverify.Verify(p, slhverify.FIPS205, pk, msg, ctx, sig) == nil)

	// The same signature checked as a SPHINCS+ round 3.1 signature (which
	// has no context string), and with a tampered message.
	fmt.Println(slhverify.Verify(p, slhverify.Round31, pk, msg, ctx, sig))
	err = slhverify.Verify(p, slhverify.FIPS205, pk, []byte("firmware image v2"), ctx, sig)
	fmt.Println(errors.Is(err, slhverify.ErrSignature), err)
	// Output:
	// valid: true
	// slhverify: SPHINCS+ round 3.1 has no context string, got 4 bytes
	// true slhverify: signature does not verify (computed root differs from PK.root) (slh-dsa-sha2-128f, FIPS205)
}
