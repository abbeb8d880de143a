/*
 * mbedtls_config.h: the minimal mbedTLS 2.28 configuration of the classical
 * baselines (RSA-2048, ECDSA P-256, ECDH P-256), passed to every mbedTLS
 * and firmware object as MBEDTLS_CONFIG_FILE. It replaces mbedTLS's
 * include/mbedtls/config.h entirely, so only what is listed here is built.
 *
 * Tuning values (MPI and ECP window sizes, fixed-point comb for the base
 * point, NIST fast reduction) are left at the library's defaults, the
 * settings a user of an unmodified mbedTLS gets:
 *   MBEDTLS_MPI_WINDOW_SIZE 2, MBEDTLS_ECP_WINDOW_SIZE 4,
 *   MBEDTLS_ECP_FIXED_POINT_OPTIM 1, MBEDTLS_ECP_NIST_OPTIM on.
 * MBEDTLS_HAVE_ASM is on: bn_mul.h then uses its Thumb-1 multiply-accumulate
 * for the Cortex-M0+ (ARMv6-M has no UMAAL and no 32x32->64 multiply).
 *
 * There is no entropy module: every random input comes from
 * the firmware's deterministic generator (rng.h) through the f_rng callback
 * each mbedTLS call takes, so a run is repeatable cycle for cycle. Those
 * keys are test vectors, never to be used.
 */
#ifndef PQB_MBEDTLS_CONFIG_H
#define PQB_MBEDTLS_CONFIG_H

/* System support: inline assembly in bignum, no file system, no time. */
#define MBEDTLS_HAVE_ASM

/* Multi-precision integers; prime generation for RSA key generation. */
#define MBEDTLS_BIGNUM_C
#define MBEDTLS_GENPRIME

/* RSA (RFC 8017): PKCS#1 v1.5 signatures need the DigestInfo OIDs. */
#define MBEDTLS_RSA_C
#define MBEDTLS_PKCS1_V15
#define MBEDTLS_OID_C

/* Elliptic curves: NIST P-256 (FIPS 186-4 D.1.2.3, SEC 2 secp256r1) only. */
#define MBEDTLS_ECP_C
#define MBEDTLS_ECP_DP_SECP256R1_ENABLED
#define MBEDTLS_ECP_NIST_OPTIM

/* ECDSA (FIPS 186-4 6.4; randomised k from f_rng) and ECDH (SP 800-56A). */
#define MBEDTLS_ECDSA_C
#define MBEDTLS_ECDH_C
#define MBEDTLS_ASN1_PARSE_C
#define MBEDTLS_ASN1_WRITE_C

/* Hashing: SHA-256 (FIPS 180-4) and the message-digest layer RSA uses. */
#define MBEDTLS_MD_C
#define MBEDTLS_SHA256_C

/* HMAC_DRBG (SP 800-90A): ecp.c's internal generator, which blinds the
 * point multiplications that get no f_rng (those inside ECDSA verify), as
 * in mbedTLS's default configuration. It is seeded from the scalar and the
 * point, so it is deterministic too. */
#define MBEDTLS_HMAC_DRBG_C

#include "mbedtls/check_config.h"

#endif
