/*
 * bench.c: the benchmark driver.
 *
 * For every scheme compiled in (WITH_<SCHEME>), it times each operation
 * REPS_* times with the 1 MHz timer and the 64-bit cycle counter, measures
 * its peak stack by painting, checks the result on the device (ML-KEM:
 * decaps equals encaps and a ciphertext with one flipped bit gives another
 * key; ML-DSA and SPHINCS+: verify accepts and a signature with one
 * flipped bit is rejected), prints one protocol line per measurement, and
 * after the first iteration prints the test vector the host re-checks
 * independently (circl for FIPS 203 / FIPS 204; pqrepro's slhverify for
 * SPHINCS+ round 3.1). A failed check prints an "err" line and marks the
 * measurement ok=0; it is never dropped. The whole run then repeats
 * (run=1, 2, ...) so a host that connects late still sees a full run.
 *
 * SPHINCS+ operations take seconds to minutes of simulated time (a
 * SPHINCS+-SHA2-128s signature is billions of cycles), so each is
 * announced by a "b" (begin) line: a run stopped by its time limit then
 * says which operation it was in.
 */
#include <string.h>

#include "bench.h"
#include "board.h"
#include "dsacount.h"
#include "proto.h"
#include "rng.h"
#include "xip.h"

#ifndef FW_ID
#define FW_ID "unknown"
#endif
#ifndef FW_CFLAGS
#define FW_CFLAGS "unknown"
#endif
#ifndef FW_CC
#define FW_CC __VERSION__
#endif
#ifndef FW_PROFILE
#define FW_PROFILE "custom"
#endif
#ifndef RNG_SEED
#define RNG_SEED 0x5eed2040ull
#endif
#ifndef REPS_KEM
#define REPS_KEM 10
#endif
#ifndef REPS_DSA_KEYGEN
#define REPS_DSA_KEYGEN 10
#endif
#ifndef REPS_DSA_SIGN
#define REPS_DSA_SIGN 100
#endif
#ifndef REPS_SLH_KEYGEN
#define REPS_SLH_KEYGEN 1
#endif
#ifndef REPS_SLH_SIGN_FAST
#define REPS_SLH_SIGN_FAST 3
#endif
#ifndef REPS_SLH_SIGN_SMALL
#define REPS_SLH_SIGN_SMALL 1
#endif
#ifndef RUNS
#define RUNS 0 /* 0: repeat forever */
#endif

#define VEC_CHUNK 128

extern uint32_t __image_start, __code_end;

/* ---- timing and output helpers ---- */

void bench_start(span_t *s) {
    uart_flush();
    stack_paint();
    XIP_COLD_START();
    s->cyc0 = cycles();
    s->us0 = time_us();
}

void bench_stop(span_t *s) {
    uint64_t us1 = time_us();
    uint64_t c1 = cycles();
    s->us = us1 - s->us0;
    s->cyc = c1 - s->cyc0;
    s->stack = stack_used();
    s->heap = heap_high_water();
}

/* emit_fields writes a measurement's fields, without its line's end. */
static void emit_fields(const char *scheme, const char *op, uint32_t i, const span_t *s, int ok) {
    proto_begin("m");
    proto_str("scheme", scheme);
    proto_str("op", op);
    proto_u32("i", i);
    proto_u64("us", s->us);
    proto_u64("cyc", s->cyc);
    proto_u32("stack", s->stack);
    proto_u32("heap", s->heap);
    proto_u32("ok", ok ? 1u : 0u);
}

void bench_emit(const char *scheme, const char *op, uint32_t i, const span_t *s, int ok) {
    emit_fields(scheme, op, i, s, ok);
    proto_end();
}

volatile dsacount_t dsacount;

/* dsacount_reset zeroes the rejection loop's counts (dsacount.h). */
static void dsacount_reset(void) {
    dsacount.iters = 0;
    dsacount.r0_checks = 0;
    dsacount.ct0_checks = 0;
    dsacount.hints = 0;
}

#ifdef DSA_COUNTS
/* bench_emit_counts is bench_emit with an ML-DSA signature's counts of
 * its rejection loop (dsacount.h): iterations and the checks that ran. */
static void bench_emit_counts(const char *scheme, const char *op, uint32_t i, const span_t *s, int ok, const dsacount_t *c) {
    emit_fields(scheme, op, i, s, ok);
    proto_u32("iters", c->iters);
    proto_u32("r0", c->r0_checks);
    proto_u32("ct0", c->ct0_checks);
    proto_u32("hints", c->hints);
    proto_end();
}
#endif

static uint32_t failures;

void bench_fail(const char *scheme, const char *op, uint32_t i, const char *msg) {
    failures++;
    proto_begin("err");
    proto_str("scheme", scheme);
    proto_str("op", op);
    proto_u32("i", i);
    proto_str("msg", msg);
    proto_end();
}

void bench_vector(const char *scheme, const char *field, const uint8_t *p, size_t n) {
    size_t off = 0;
    do {
        size_t k = n - off < VEC_CHUNK ? n - off : VEC_CHUNK;
        proto_begin("v");
        proto_str("scheme", scheme);
        proto_str("field", field);
        proto_u32("off", (uint32_t)off);
        proto_u32("len", (uint32_t)n);
        proto_hex("hex", p + off, k);
        proto_end();
        off += k;
    } while (off < n);
}

/* ---- ML-KEM (FIPS 203) ---- */

typedef struct {
    const char *name;
    size_t pk, sk, ct;
    int (*keypair)(uint8_t *pk, uint8_t *sk);
    int (*enc)(uint8_t *ct, uint8_t *ss, const uint8_t *pk);
    int (*dec)(uint8_t *ss, const uint8_t *ct, const uint8_t *sk);
} kem_t;

#define KEM_ENTRY(NAME, NS)                                                        \
    {NAME, NS##_CRYPTO_PUBLICKEYBYTES, NS##_CRYPTO_SECRETKEYBYTES,                  \
     NS##_CRYPTO_CIPHERTEXTBYTES, NS##_crypto_kem_keypair, NS##_crypto_kem_enc,     \
     NS##_crypto_kem_dec}

#ifdef WITH_MLKEM512
#include "crypto_kem/ml-kem-512/clean/api.h"
#endif
#ifdef WITH_MLKEM768
#include "crypto_kem/ml-kem-768/clean/api.h"
#endif
#ifdef WITH_MLKEM1024
#include "crypto_kem/ml-kem-1024/clean/api.h"
#endif

static const kem_t kems[] = {
#ifdef WITH_MLKEM512
    KEM_ENTRY("ml-kem-512", PQCLEAN_MLKEM512_CLEAN),
#endif
#ifdef WITH_MLKEM768
    KEM_ENTRY("ml-kem-768", PQCLEAN_MLKEM768_CLEAN),
#endif
#ifdef WITH_MLKEM1024
    KEM_ENTRY("ml-kem-1024", PQCLEAN_MLKEM1024_CLEAN),
#endif
    {0},
};

/* Buffers are static, not on the stack, so the painted stack depth is the
 * operation's own (as in the paper's setup and pqm4). */
static uint8_t kpk[1568], ksk[3168], kct[1568], kss1[32], kss2[32], kss3[32];
static uint8_t coins[64]; /* the largest: ML-KEM keygen's d || z, SPHINCS+'s 3n = 48 */

static void bench_kem(const kem_t *k, uint64_t seed) {
    span_t s;
    rng_seed(seed, k->name);
    for (uint32_t i = 0; i < REPS_KEM; i++) {
        if (i == 0) {
            rng_capture(coins, 64);
        }
        bench_start(&s);
        int r = k->keypair(kpk, ksk);
        bench_stop(&s);
        if (i == 0) {
            rng_capture(NULL, 0);
            bench_vector(k->name, "keygen_coins", coins, 64);
        }
        bench_emit(k->name, "keygen", i, &s, r == 0);
        if (r != 0) {
            bench_fail(k->name, "keygen", i, "keypair_returned_error");
        }

        if (i == 0) {
            rng_capture(coins, 32);
        }
        bench_start(&s);
        r = k->enc(kct, kss1, kpk);
        bench_stop(&s);
        if (i == 0) {
            rng_capture(NULL, 0);
            bench_vector(k->name, "encaps_coins", coins, 32);
        }
        bench_emit(k->name, "encaps", i, &s, r == 0);
        if (r != 0) {
            bench_fail(k->name, "encaps", i, "enc_returned_error");
        }

        bench_start(&s);
        r = k->dec(kss2, kct, ksk);
        bench_stop(&s);
        int ok = r == 0 && memcmp(kss1, kss2, 32) == 0;
        if (!ok) {
            bench_fail(k->name, "decaps", i, "shared_secret_mismatch");
        }
        /* Implicit rejection (FIPS 203 6.3): a ciphertext with one bit
         * flipped must decapsulate to a different key. */
        size_t pos = (i * 131u) % k->ct;
        kct[pos] ^= (uint8_t)(1u << (i % 8u));
        k->dec(kss3, kct, ksk);
        kct[pos] ^= (uint8_t)(1u << (i % 8u));
        if (memcmp(kss3, kss1, 32) == 0) {
            ok = 0;
            bench_fail(k->name, "decaps", i, "flipped_ciphertext_accepted");
        }
        bench_emit(k->name, "decaps", i, &s, ok);

        if (i == 0) {
            bench_vector(k->name, "pk", kpk, k->pk);
            bench_vector(k->name, "sk", ksk, k->sk);
            bench_vector(k->name, "ct", kct, k->ct);
            bench_vector(k->name, "ss", kss1, 32);
        }
    }
}

/* ---- ML-DSA (FIPS 204) and SPHINCS+ (round 3.1, the cost of FIPS 205 SLH-DSA) ---- */

/* Both are signature schemes behind PQClean's crypto_sign API. keygens
 * and signs are the repetition counts; flip_all says whether every
 * signature is also checked with one bit flipped (ML-DSA: cheap), or only
 * the first (SPHINCS+: the rejected verify costs as much as a timed one,
 * a minute of emulation per SPHINCS+-128f signature); announce emits the
 * "b" line before each operation. */
typedef struct {
    const char *name;
    size_t pk, sk, sig, seed;
    int (*keypair)(uint8_t *pk, uint8_t *sk);
    int (*sign)(uint8_t *sig, size_t *siglen, const uint8_t *m, size_t mlen, const uint8_t *sk);
    int (*verify)(const uint8_t *sig, size_t siglen, const uint8_t *m, size_t mlen,
                  const uint8_t *pk);
    uint32_t keygens, signs;
    int flip_all, announce;
} dsa_t;

#define DSA_ENTRY(NAME, NS)                                                        \
    {NAME, NS##_CRYPTO_PUBLICKEYBYTES, NS##_CRYPTO_SECRETKEYBYTES, NS##_CRYPTO_BYTES, \
     32, NS##_crypto_sign_keypair, NS##_crypto_sign_signature, NS##_crypto_sign_verify, \
     REPS_DSA_KEYGEN, REPS_DSA_SIGN, 1, 0}

/* SPHINCS+ draws SK.seed || SK.prf || PK.seed (3n bytes, CRYPTO_SEEDBYTES)
 * in its keypair. */
#define SLH_ENTRY(NAME, NS, SIGNS)                                                 \
    {NAME, NS##_CRYPTO_PUBLICKEYBYTES, NS##_CRYPTO_SECRETKEYBYTES, NS##_CRYPTO_BYTES, \
     NS##_CRYPTO_SEEDBYTES, NS##_crypto_sign_keypair, NS##_crypto_sign_signature,     \
     NS##_crypto_sign_verify, REPS_SLH_KEYGEN, SIGNS, 0, 1}

#ifdef WITH_MLDSA44
#include "crypto_sign/ml-dsa-44/clean/api.h"
#endif
#ifdef WITH_MLDSA65
#include "crypto_sign/ml-dsa-65/clean/api.h"
#endif
#ifdef WITH_MLDSA87
#include "crypto_sign/ml-dsa-87/clean/api.h"
#endif
#ifdef WITH_SPHINCS_SHA2_128F
#include "crypto_sign/sphincs-sha2-128f-simple/clean/api.h"
#endif
#ifdef WITH_SPHINCS_SHAKE_128F
#include "crypto_sign/sphincs-shake-128f-simple/clean/api.h"
#endif
#ifdef WITH_SPHINCS_SHA2_128S
#include "crypto_sign/sphincs-sha2-128s-simple/clean/api.h"
#endif

static const dsa_t dsas[] = {
#ifdef WITH_MLDSA44
    DSA_ENTRY("ml-dsa-44", PQCLEAN_MLDSA44_CLEAN),
#endif
#ifdef WITH_MLDSA65
    DSA_ENTRY("ml-dsa-65", PQCLEAN_MLDSA65_CLEAN),
#endif
#ifdef WITH_MLDSA87
    DSA_ENTRY("ml-dsa-87", PQCLEAN_MLDSA87_CLEAN),
#endif
#ifdef WITH_SPHINCS_SHA2_128F
    SLH_ENTRY("sphincs-sha2-128f", PQCLEAN_SPHINCSSHA2128FSIMPLE_CLEAN, REPS_SLH_SIGN_FAST),
#endif
#ifdef WITH_SPHINCS_SHAKE_128F
    SLH_ENTRY("sphincs-shake-128f", PQCLEAN_SPHINCSSHAKE128FSIMPLE_CLEAN, REPS_SLH_SIGN_FAST),
#endif
#ifdef WITH_SPHINCS_SHA2_128S
    SLH_ENTRY("sphincs-sha2-128s", PQCLEAN_SPHINCSSHA2128SSIMPLE_CLEAN, REPS_SLH_SIGN_SMALL),
#endif
    {0},
};

#if defined(WITH_MLDSA44) || defined(WITH_MLDSA65) || defined(WITH_MLDSA87) || \
    defined(WITH_SPHINCS_SHA2_128F) || defined(WITH_SPHINCS_SHAKE_128F) ||      \
    defined(WITH_SPHINCS_SHA2_128S)
#define WITH_DSA 1
/* Largest keys and signature of the schemes compiled in. */
#if defined(WITH_SPHINCS_SHA2_128F) || defined(WITH_SPHINCS_SHAKE_128F)
#define DSA_SIG_MAX 17088 /* SPHINCS+-128f */
#elif defined(WITH_SPHINCS_SHA2_128S)
#define DSA_SIG_MAX 7856 /* SPHINCS+-128s */
#else
#define DSA_SIG_MAX 4627 /* ML-DSA-87 */
#endif
#if defined(WITH_MLDSA44) || defined(WITH_MLDSA65) || defined(WITH_MLDSA87)
#define DSA_PK_MAX 2592
#define DSA_SK_MAX 4896
#else
#define DSA_PK_MAX 32
#define DSA_SK_MAX 64
#endif
static uint8_t dpk[DSA_PK_MAX], dsk[DSA_SK_MAX], dpk2[DSA_PK_MAX], dsk2[DSA_SK_MAX], dsig[DSA_SIG_MAX], dmsg[MSG_BYTES];

/* bench_begin announces a long operation ("b" line), so a run that hits
 * its time limit can say which operation it was in. */
static void bench_begin(const dsa_t *d, const char *op, uint32_t i) {
    if (!d->announce) {
        return;
    }
    proto_begin("b");
    proto_str("scheme", d->name);
    proto_str("op", op);
    proto_u32("i", i);
    proto_end();
}

static void bench_dsa(const dsa_t *d, uint64_t seed) {
    span_t s;
    rng_seed(seed, d->name);
    for (uint32_t i = 0; i < d->keygens; i++) {
        if (i == 0) {
            rng_capture(coins, d->seed);
        }
        bench_begin(d, "keygen", i);
        bench_start(&s);
        int r = d->keypair(i == 0 ? dpk : dpk2, i == 0 ? dsk : dsk2);
        bench_stop(&s);
        if (i == 0) {
            rng_capture(NULL, 0);
            bench_vector(d->name, "keygen_seed", coins, d->seed);
            bench_vector(d->name, "pk", dpk, d->pk);
            bench_vector(d->name, "sk", dsk, d->sk);
        }
        bench_emit(d->name, "keygen", i, &s, r == 0);
        if (r != 0) {
            bench_fail(d->name, "keygen", i, "keypair_returned_error");
        }
    }
    for (uint32_t i = 0; i < d->signs; i++) {
        /* Message i: MSG_BYTES from the scheme's stream (the paper does
         * not say what it signed). */
        rng_bytes(dmsg, sizeof dmsg);
        size_t siglen = 0;
        bench_begin(d, "sign", i);
        dsacount_reset();
        bench_start(&s);
        int r = d->sign(dsig, &siglen, dmsg, sizeof dmsg, dsk);
        bench_stop(&s);
        dsacount_t counts = {dsacount.iters, dsacount.r0_checks, dsacount.ct0_checks, dsacount.hints};
        int ok = r == 0 && siglen == d->sig;
        if (!ok) {
            bench_fail(d->name, "sign", i, "sign_returned_error");
        }
#ifdef DSA_COUNTS
        if (counts.iters > 0) { /* an ML-DSA set with its counters wrapped */
            bench_emit_counts(d->name, "sign", i, &s, ok, &counts);
        } else {
            bench_emit(d->name, "sign", i, &s, ok);
        }
#else
        (void)counts;
        bench_emit(d->name, "sign", i, &s, ok);
#endif
        if (i == 0) {
            bench_vector(d->name, "msg", dmsg, sizeof dmsg);
            bench_vector(d->name, "sig", dsig, d->sig);
        }

        bench_begin(d, "verify", i);
        bench_start(&s);
        r = d->verify(dsig, siglen, dmsg, sizeof dmsg, dpk);
        bench_stop(&s);
        ok = r == 0;
        if (!ok) {
            bench_fail(d->name, "verify", i, "valid_signature_rejected");
        }
        if (d->flip_all || i == 0) {
            size_t pos = (i * 197u) % d->sig;
            dsig[pos] ^= (uint8_t)(1u << (i % 8u));
            if (d->verify(dsig, siglen, dmsg, sizeof dmsg, dpk) == 0) {
                ok = 0;
                bench_fail(d->name, "verify", i, "flipped_signature_accepted");
            }
            dsig[pos] ^= (uint8_t)(1u << (i % 8u));
        }
        bench_emit(d->name, "verify", i, &s, ok);
    }
}
#endif

/* ---- the run ---- */

static void put_schemes(void) {
    char buf[160];
    size_t n = 0;
    buf[0] = 0;
    for (const kem_t *k = kems; k->name; k++) {
        size_t l = strlen(k->name);
        if (n + l + 2 < sizeof buf) {
            if (n) buf[n++] = ',';
            memcpy(buf + n, k->name, l);
            n += l;
        }
    }
    for (const dsa_t *d = dsas; d->name; d++) {
        size_t l = strlen(d->name);
        if (n + l + 2 < sizeof buf) {
            if (n) buf[n++] = ',';
            memcpy(buf + n, d->name, l);
            n += l;
        }
    }
#ifdef WITH_CLASSIC
    const char *c = "rsa-2048,ecdsa-p256,ecdh-p256";
    size_t l = strlen(c);
    if (n + l + 2 < sizeof buf) {
        if (n) buf[n++] = ',';
        memcpy(buf + n, c, l);
        n += l;
    }
#endif
    buf[n] = 0;
    proto_str("schemes", buf);
}

int main(void) {
    board_init();
    uint32_t img_crc = crc32_update(0, (const uint8_t *)&__image_start,
                                    (size_t)((uint8_t *)&__code_end - (uint8_t *)&__image_start));
    for (uint32_t run = 0; RUNS == 0 || run < RUNS; run++) {
        proto_reset();
        failures = 0;
        uint64_t t0 = time_us();
        proto_begin("start");
        proto_u32("proto", 1);
        proto_u32("run", run);
        proto_str("fw", FW_ID);
        proto_u32("img", img_crc);
        proto_u32("clk", SYS_CLOCK_HZ);
        proto_str("profile", FW_PROFILE);
        put_schemes();
        proto_u64("seed", RNG_SEED);
        proto_u32("stackcap", stack_capacity());
        proto_u32("heapcap", heap_capacity());
        proto_str("cc", FW_CC);
        proto_str("cflags", FW_CFLAGS);
        proto_end();
#ifdef FAULT_TEST
        /* Test hook: stop as a fault would, so the host's fault path runs. */
        __asm__ volatile("bkpt #0x42");
#endif

        for (const kem_t *k = kems; k->name; k++) {
            bench_kem(k, RNG_SEED);
        }
#ifdef WITH_DSA
        for (const dsa_t *d = dsas; d->name; d++) {
            bench_dsa(d, RNG_SEED);
        }
#endif
#ifdef WITH_CLASSIC
        bench_classic(RNG_SEED);
#endif
        proto_begin("end");
        proto_u32("run", run);
        proto_u32("lines", proto_lines());
        proto_u32("failures", failures);
        proto_u64("us", time_us() - t0);
        proto_end();
        uart_flush();
    }
    return 0;
}
