package picoboard

import (
	"testing"

	"pqrepro/datasets/picodata"
)

func TestOwnerOf(t *testing.T) {
	for _, tc := range []struct{ path, want string }{
		{"/r/.cache/pico/npm-fw/node_modules/pqclean/deps/PQClean/crypto_kem/ml-kem-512/clean/kem.c", "ml-kem-512"},
		{"/r/.cache/pico/npm-fw/node_modules/pqclean/deps/PQClean/common/fips202.c", "pqclean-common"},
		{"/r/.cache/pico/mbedtls-2.28.3-1/src/library/rsa.c", "rsa-2048"},
		{"/r/.cache/pico/mbedtls-2.28.3-1/src/library/rsa_internal.c", "rsa-2048"},
		{"/r/.cache/pico/mbedtls-2.28.3-1/src/library/ecdsa.c", "ecdsa-p256"},
		{"/r/.cache/pico/mbedtls-2.28.3-1/src/library/ecdh.c", "ecdh-p256"},
		{"/r/.cache/pico/mbedtls-2.28.3-1/src/library/bignum.c", "mbedtls"},
		{"/r/.cache/pico/mbedtls-2.28.3-1/src/include/mbedtls/bn_mul.h", "mbedtls"},
		{"/r/experiments/pico/firmware/classic.c", "firmware"},
		{"/usr/lib/newlib/memcpy.c", ""},
	} {
		if got := ownerOf(tc.path); got != tc.want {
			t.Errorf("ownerOf(%s) = %q, want %q", tc.path, got, tc.want)
		}
	}
}

func TestImageSilentOps(t *testing.T) {
	for _, tc := range []struct {
		img  Image
		want bool
	}{
		{Image{Schemes: picodata.ClassicalSchemes, Defines: []string{"REPS_RSA_KEYGEN=3"}}, true},
		{Image{Schemes: picodata.ClassicalSchemes, Defines: []string{"REPS_RSA_KEYGEN=0"}}, false},
		{Image{Schemes: picodata.KEMSchemes, Defines: []string{"REPS_RSA_KEYGEN=3"}}, false},
		{Image{}, false},
	} {
		if got := tc.img.silentOps(); got != tc.want {
			t.Errorf("%+v: %v", tc.img, got)
		}
	}
}
