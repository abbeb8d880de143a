/*
 * gen_round31.c: prints a deterministic SPHINCS+ round 3.1 ("simple")
 * key pair, message and signature made by PQClean, for the golden files
 * testdata/round31-<name>.json of package slhverify.
 *
 * It is our own driver, not PQClean code. TestRound31 -update compiles it
 * once per parameter set together with PQClean's
 * crypto_sign/sphincs-<hash>-<size>-simple/clean/*.c, common/sha2.c and
 * common/fips202.c, with
 *
 *   -DSPX_NAMESPACE_PREFIX=PQCLEAN_SPHINCSSHA2128SSIMPLE_CLEAN (for example)
 *   -I<the clean directory> -I<common>
 *
 * PQClean's common/randombytes.c is left out: randombytes is defined below
 * as a fixed byte stream, so the output depends only on PQClean.
 *
 * Output, one "key=hex" line each: pk, msg, sig.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "api.h"

#define GEN_PASTE2(a, b) a##_##b
#define GEN_PASTE(a, b) GEN_PASTE2(a, b)
#define GEN_NS(name) GEN_PASTE(SPX_NAMESPACE_PREFIX, name)

/* randombytes is only called by crypto_sign_signature, for the n-byte
 * opt_rand; a fixed xorshift32 stream keeps the signatures reproducible. */
int PQCLEAN_randombytes(uint8_t *out, size_t n);

static uint32_t gen_state = 0x5eed1234u;

int PQCLEAN_randombytes(uint8_t *out, size_t n) {
    size_t i;
    for (i = 0; i < n; i++) {
        gen_state ^= gen_state << 13;
        gen_state ^= gen_state >> 17;
        gen_state ^= gen_state << 5;
        out[i] = (uint8_t)(gen_state >> 24);
    }
    return 0;
}

static void print_hex(const char *key, const uint8_t *b, size_t n) {
    size_t i;
    printf("%s=", key);
    for (i = 0; i < n; i++) {
        printf("%02x", b[i]);
    }
    printf("\n");
}

int main(void) {
    static uint8_t seed[GEN_NS(CRYPTO_SEEDBYTES)];
    static uint8_t pk[GEN_NS(CRYPTO_PUBLICKEYBYTES)];
    static uint8_t sk[GEN_NS(CRYPTO_SECRETKEYBYTES)];
    static uint8_t sig[GEN_NS(CRYPTO_BYTES)];
    /* The message: a fixed text followed by all byte values 0..255, so
     * that it is not ASCII-only and longer than one hash block. */
    static const char text[] = "pqrepro slhverify: SPHINCS+ round 3.1 golden message";
    uint8_t msg[sizeof text - 1 + 256];
    size_t i, siglen = 0;

    /* seed = SK.seed || SK.prf || PK.seed = 0x00, 0x01, 0x02, ... */
    for (i = 0; i < sizeof seed; i++) {
        seed[i] = (uint8_t)i;
    }
    for (i = 0; i < sizeof text - 1; i++) {
        msg[i] = (uint8_t)text[i];
    }
    for (i = 0; i < 256; i++) {
        msg[sizeof text - 1 + i] = (uint8_t)i;
    }

    if (GEN_NS(crypto_sign_seed_keypair)(pk, sk, seed) != 0) {
        fprintf(stderr, "crypto_sign_seed_keypair failed\n");
        return 1;
    }
    if (GEN_NS(crypto_sign_signature)(sig, &siglen, msg, sizeof msg, sk) != 0 || siglen != sizeof sig) {
        fprintf(stderr, "crypto_sign_signature failed\n");
        return 1;
    }
    /* Sanity check with PQClean's own verifier. */
    if (GEN_NS(crypto_sign_verify)(sig, siglen, msg, sizeof msg, pk) != 0) {
        fprintf(stderr, "crypto_sign_verify rejects the signature\n");
        return 1;
    }
    print_hex("pk", pk, sizeof pk);
    print_hex("msg", msg, sizeof msg);
    print_hex("sig", sig, siglen);
    return 0;
}
