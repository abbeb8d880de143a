/*
 * classic.c: the classical baselines with mbedTLS 2.28 (mbedtls_config.h):
 * RSA-2048 (RFC 8017 PKCS#1 v1.5 signatures with SHA-256, e = 65537),
 * ECDSA P-256 (FIPS 186-4, SHA-256) and ECDH P-256 (SP 800-56A, the shared
 * secret is the x-coordinate, 32 bytes).
 *
 * What each timed operation contains (the choices follow mbedTLS's own
 * programs/test/benchmark.c, so the numbers mean what mbedTLS users expect):
 *   rsa-2048 keygen    mbedtls_rsa_gen_key(2048, 65537); REPS_RSA_KEYGEN
 *                      times (0 in the quick profile: seconds per key on a
 *                      Cortex-M0+).
 *   rsa-2048 sign      SHA-256 of the MSG_BYTES message + PKCS#1 v1.5 sign
 *                      with the CRT private key and base blinding (mbedTLS
 *                      then checks the signature with the public key
 *                      against fault attacks; that is part of its sign).
 *   rsa-2048 verify    SHA-256 + PKCS#1 v1.5 verify.
 *   ecdsa-p256 keygen  a fresh context: group load, comb table for G,
 *                      d random, Q = dG.
 *   ecdsa-p256 sign    SHA-256 + sign with the loaded key (its group keeps
 *                      the comb table from keygen, as benchmark.c's does).
 *   ecdsa-p256 verify  SHA-256 + verify (uG + vQ).
 *   ecdh-p256 keygen   one party, cold: group load + d random, Q = dG.
 *   ecdh-p256 shared   one party: z = x(d * Q_peer) with Q_peer checked.
 *   ecdh-p256 exchange both parties end to end: two cold keygens and two
 *                      shared secrets, the classical counterpart of an
 *                      ML-KEM keygen + encaps + decaps.
 *
 * The RSA key that signs is not generated on the device: the host derives
 * it from the seed (experiments/pico/rsakey.go) and the build writes it to
 * rsa_key.h, so the quick profile can sign without a keygen. The checks on
 * the device: every valid signature verifies and the same signature with
 * one bit flipped is rejected; both ECDH parties derive the same secret;
 * an RSA keygen's key passes mbedtls_rsa_check_privkey and signs a message
 * that its public key verifies. After the first iteration of each scheme
 * the firmware prints a test vector that the host re-checks with Go's
 * crypto/rsa, crypto/ecdsa and crypto/ecdh (experiments/pico/classic_verify.go).
 */
#include <string.h>

#include "bench.h"
#include "rng.h"

#include "mbedtls/bignum.h"
#include "mbedtls/ecdh.h"
#include "mbedtls/ecdsa.h"
#include "mbedtls/ecp.h"
#include "mbedtls/rsa.h"
#include "mbedtls/sha256.h"

#include "rsa_key.h"

#ifndef REPS_RSA_KEYGEN
#define REPS_RSA_KEYGEN 0
#endif
#ifndef REPS_RSA
#define REPS_RSA 3
#endif
#ifndef REPS_ECC
#define REPS_ECC 3
#endif

/* The deterministic generator behind every f_rng argument. */
static int f_rng(void *ctx, unsigned char *out, size_t n) {
    (void)ctx;
    rng_bytes(out, n);
    return 0;
}

static uint8_t msg[MSG_BYTES], hash[32], sig[256], buf[256];
static uint8_t bufp[128], bufq[128], bufd[256], bufe[4];

static void sha256(const uint8_t *m, size_t n, uint8_t out[32]) {
    mbedtls_sha256_ret(m, n, out, 0);
}

/* ---- RSA-2048 ---- */

static void rsa_keygen(uint32_t i) {
    static const char *name = "rsa-2048";
    span_t s;
    mbedtls_rsa_context k;
    mbedtls_rsa_init(&k, MBEDTLS_RSA_PKCS_V15, 0);
    bench_start(&s);
    int r = mbedtls_rsa_gen_key(&k, f_rng, NULL, 2048, 65537);
    bench_stop(&s);
    int ok = r == 0 && mbedtls_rsa_check_privkey(&k) == 0 && mbedtls_rsa_get_len(&k) == 256;
    if (r != 0) {
        bench_fail(name, "keygen", i, "gen_key_returned_error");
    } else if (!ok) {
        bench_fail(name, "keygen", i, "generated_key_invalid");
    }
    if (ok) {
        rng_bytes(msg, sizeof msg);
        sha256(msg, sizeof msg, hash);
        if (mbedtls_rsa_pkcs1_sign(&k, f_rng, NULL, MBEDTLS_RSA_PRIVATE, MBEDTLS_MD_SHA256, 32, hash, sig) != 0 ||
            mbedtls_rsa_pkcs1_verify(&k, NULL, NULL, MBEDTLS_RSA_PUBLIC, MBEDTLS_MD_SHA256, 32, hash, sig) != 0) {
            ok = 0;
            bench_fail(name, "keygen", i, "generated_key_does_not_sign");
        }
    }
    bench_emit(name, "keygen", i, &s, ok);
    if (i == 0 && ok &&
        mbedtls_rsa_export_raw(&k, buf, 256, bufp, 128, bufq, 128, bufd, 256, bufe, 4) == 0) {
        bench_vector(name, "keygen_n", buf, 256);
        bench_vector(name, "keygen_p", bufp, 128);
        bench_vector(name, "keygen_q", bufq, 128);
        bench_vector(name, "keygen_d", bufd, 256);
        bench_vector(name, "keygen_e", bufe, 4);
    }
    mbedtls_rsa_free(&k);
}

static void bench_rsa(uint64_t seed) {
    static const char *name = "rsa-2048";
    span_t s;
    rng_seed(seed, name);
    for (uint32_t i = 0; i < REPS_RSA_KEYGEN; i++) {
        rsa_keygen(i);
    }

    mbedtls_rsa_context k;
    mbedtls_rsa_init(&k, MBEDTLS_RSA_PKCS_V15, 0);
    if (mbedtls_rsa_import_raw(&k, RSA_KEY_N, sizeof RSA_KEY_N, RSA_KEY_P, sizeof RSA_KEY_P, RSA_KEY_Q,
                               sizeof RSA_KEY_Q, RSA_KEY_D, sizeof RSA_KEY_D, RSA_KEY_E, sizeof RSA_KEY_E) != 0 ||
        mbedtls_rsa_complete(&k) != 0 || mbedtls_rsa_check_privkey(&k) != 0) {
        bench_fail(name, "sign", 0, "build_key_rejected");
        mbedtls_rsa_free(&k);
        return;
    }
    for (uint32_t i = 0; i < REPS_RSA; i++) {
        rng_bytes(msg, sizeof msg);
        bench_start(&s);
        sha256(msg, sizeof msg, hash);
        int r = mbedtls_rsa_pkcs1_sign(&k, f_rng, NULL, MBEDTLS_RSA_PRIVATE, MBEDTLS_MD_SHA256, 32, hash, sig);
        bench_stop(&s);
        if (r != 0) {
            bench_fail(name, "sign", i, "sign_returned_error");
        }
        bench_emit(name, "sign", i, &s, r == 0);
        if (i == 0) {
            bench_vector(name, "n", RSA_KEY_N, sizeof RSA_KEY_N);
            bench_vector(name, "e", RSA_KEY_E, sizeof RSA_KEY_E);
            bench_vector(name, "p", RSA_KEY_P, sizeof RSA_KEY_P);
            bench_vector(name, "q", RSA_KEY_Q, sizeof RSA_KEY_Q);
            bench_vector(name, "d", RSA_KEY_D, sizeof RSA_KEY_D);
            bench_vector(name, "msg", msg, sizeof msg);
            bench_vector(name, "sig", sig, sizeof sig);
        }

        bench_start(&s);
        sha256(msg, sizeof msg, hash);
        r = mbedtls_rsa_pkcs1_verify(&k, NULL, NULL, MBEDTLS_RSA_PUBLIC, MBEDTLS_MD_SHA256, 32, hash, sig);
        bench_stop(&s);
        int ok = r == 0;
        if (!ok) {
            bench_fail(name, "verify", i, "valid_signature_rejected");
        }
        size_t pos = (i * 197u) % sizeof sig;
        sig[pos] ^= (uint8_t)(1u << (i % 8u));
        if (mbedtls_rsa_pkcs1_verify(&k, NULL, NULL, MBEDTLS_RSA_PUBLIC, MBEDTLS_MD_SHA256, 32, hash, sig) == 0) {
            ok = 0;
            bench_fail(name, "verify", i, "flipped_signature_accepted");
        }
        sig[pos] ^= (uint8_t)(1u << (i % 8u));
        bench_emit(name, "verify", i, &s, ok);
    }
    mbedtls_rsa_free(&k);
}

/* ---- ECDSA P-256 ---- */

static int write_point(const mbedtls_ecp_group *g, const mbedtls_ecp_point *q, uint8_t out[65]) {
    size_t n = 0;
    return mbedtls_ecp_point_write_binary(g, q, MBEDTLS_ECP_PF_UNCOMPRESSED, &n, out, 65) == 0 && n == 65;
}

static void bench_ecdsa(uint64_t seed) {
    static const char *name = "ecdsa-p256";
    span_t s;
    rng_seed(seed, name);
    mbedtls_ecdsa_context key, tmp;
    mbedtls_mpi r, sv;
    mbedtls_ecdsa_init(&key);
    mbedtls_mpi_init(&r);
    mbedtls_mpi_init(&sv);
    int have_key = 0;
    for (uint32_t i = 0; i < REPS_ECC; i++) {
        /* Iteration 0's key is kept for signing; the others are dropped. */
        mbedtls_ecdsa_context *k = i == 0 ? &key : &tmp;
        if (i > 0) {
            mbedtls_ecdsa_init(&tmp);
        }
        bench_start(&s);
        int rc = mbedtls_ecdsa_genkey(k, MBEDTLS_ECP_DP_SECP256R1, f_rng, NULL);
        bench_stop(&s);
        int ok = rc == 0 && mbedtls_ecp_check_pub_priv(k, k) == 0;
        if (!ok) {
            bench_fail(name, "keygen", i, rc != 0 ? "genkey_returned_error" : "generated_key_invalid");
        }
        bench_emit(name, "keygen", i, &s, ok);
        if (i == 0) {
            have_key = ok;
        } else {
            mbedtls_ecdsa_free(&tmp);
        }
    }
    for (uint32_t i = 0; have_key && i < REPS_ECC; i++) {
        rng_bytes(msg, sizeof msg);
        bench_start(&s);
        sha256(msg, sizeof msg, hash);
        int rc = mbedtls_ecdsa_sign(&key.grp, &r, &sv, &key.d, hash, 32, f_rng, NULL);
        bench_stop(&s);
        if (rc != 0) {
            bench_fail(name, "sign", i, "sign_returned_error");
        }
        bench_emit(name, "sign", i, &s, rc == 0);
        uint8_t rs[64];
        if (mbedtls_mpi_write_binary(&r, rs, 32) != 0 || mbedtls_mpi_write_binary(&sv, rs + 32, 32) != 0) {
            bench_fail(name, "sign", i, "signature_too_long");
        }
        if (i == 0) {
            uint8_t d[32], q[65];
            if (mbedtls_mpi_write_binary(&key.d, d, 32) == 0 && write_point(&key.grp, &key.Q, q)) {
                bench_vector(name, "d", d, 32);
                bench_vector(name, "pub", q, 65);
            }
            bench_vector(name, "msg", msg, sizeof msg);
            bench_vector(name, "sig", rs, 64);
        }

        bench_start(&s);
        sha256(msg, sizeof msg, hash);
        rc = mbedtls_ecdsa_verify(&key.grp, hash, 32, &key.Q, &r, &sv);
        bench_stop(&s);
        int ok = rc == 0;
        if (!ok) {
            bench_fail(name, "verify", i, "valid_signature_rejected");
        }
        /* Flip one bit of r or s, as the device would receive it. */
        size_t pos = (i * 197u) % 64u;
        rs[pos] ^= (uint8_t)(1u << (i % 8u));
        mbedtls_mpi_read_binary(&r, rs, 32);
        mbedtls_mpi_read_binary(&sv, rs + 32, 32);
        if (mbedtls_ecdsa_verify(&key.grp, hash, 32, &key.Q, &r, &sv) == 0) {
            ok = 0;
            bench_fail(name, "verify", i, "flipped_signature_accepted");
        }
        bench_emit(name, "verify", i, &s, ok);
    }
    mbedtls_mpi_free(&r);
    mbedtls_mpi_free(&sv);
    mbedtls_ecdsa_free(&key);
}

/* ---- ECDH P-256 ---- */

typedef struct {
    mbedtls_ecp_group g;
    mbedtls_mpi d, z;
    mbedtls_ecp_point q;
} party_t;

static void party_init(party_t *p) {
    mbedtls_ecp_group_init(&p->g);
    mbedtls_mpi_init(&p->d);
    mbedtls_mpi_init(&p->z);
    mbedtls_ecp_point_init(&p->q);
}

static void party_free(party_t *p) {
    mbedtls_ecp_group_free(&p->g);
    mbedtls_mpi_free(&p->d);
    mbedtls_mpi_free(&p->z);
    mbedtls_ecp_point_free(&p->q);
}

/* A cold keygen: the group is loaded as a fresh handshake would. */
static int party_keygen(party_t *p) {
    int r = mbedtls_ecp_group_load(&p->g, MBEDTLS_ECP_DP_SECP256R1);
    if (r == 0) {
        r = mbedtls_ecdh_gen_public(&p->g, &p->d, &p->q, f_rng, NULL);
    }
    return r;
}

static int party_shared(party_t *p, const party_t *peer) {
    return mbedtls_ecdh_compute_shared(&p->g, &p->z, &peer->q, &p->d, f_rng, NULL);
}

static void bench_ecdh(uint64_t seed) {
    static const char *name = "ecdh-p256";
    span_t s;
    rng_seed(seed, name);
    for (uint32_t i = 0; i < REPS_ECC; i++) {
        party_t a, b;
        party_init(&a);
        party_init(&b);

        bench_start(&s);
        int r = party_keygen(&a);
        bench_stop(&s);
        bench_emit(name, "keygen", i, &s, r == 0);
        if (r != 0) {
            bench_fail(name, "keygen", i, "gen_public_returned_error");
        }
        int rb = party_keygen(&b);
        if (rb != 0) {
            bench_fail(name, "keygen", i, "gen_public_returned_error");
        }

        bench_start(&s);
        r = party_shared(&a, &b);
        bench_stop(&s);
        int ok = r == 0 && rb == 0 && party_shared(&b, &a) == 0 && mbedtls_mpi_cmp_mpi(&a.z, &b.z) == 0;
        if (!ok) {
            bench_fail(name, "shared", i, "parties_disagree");
        }
        bench_emit(name, "shared", i, &s, ok);
        if (i == 0 && ok) {
            uint8_t v[65];
            if (mbedtls_mpi_write_binary(&a.d, v, 32) == 0) bench_vector(name, "d_a", v, 32);
            if (write_point(&a.g, &a.q, v)) bench_vector(name, "pub_a", v, 65);
            if (mbedtls_mpi_write_binary(&b.d, v, 32) == 0) bench_vector(name, "d_b", v, 32);
            if (write_point(&b.g, &b.q, v)) bench_vector(name, "pub_b", v, 65);
            if (mbedtls_mpi_write_binary(&a.z, v, 32) == 0) bench_vector(name, "ss", v, 32);
        }
        party_free(&a);
        party_free(&b);

        /* The whole exchange, both sides. */
        party_init(&a);
        party_init(&b);
        bench_start(&s);
        r = party_keygen(&a);
        if (r == 0) r = party_keygen(&b);
        if (r == 0) r = party_shared(&b, &a);
        if (r == 0) r = party_shared(&a, &b);
        bench_stop(&s);
        ok = r == 0 && mbedtls_mpi_cmp_mpi(&a.z, &b.z) == 0;
        if (!ok) {
            bench_fail(name, "exchange", i, "parties_disagree");
        }
        bench_emit(name, "exchange", i, &s, ok);
        party_free(&a);
        party_free(&b);
    }
}

void bench_classic(uint64_t seed) {
    bench_rsa(seed);
    bench_ecdsa(seed);
    bench_ecdh(seed);
}
