/*
 * rng.h: the deterministic "randombytes" of the benchmark.
 *
 * Benchmarks must be repeatable (same image, same cycles), so the firmware
 * never uses a hardware entropy source: every scheme starts from
 * rng_seed(RNG_SEED, scheme name) and draws from xoshiro128++ (Blackman and
 * Vigna 2019), seeded through SplitMix64. This is NOT a cryptographic
 * generator; the keys it makes are test vectors, never to be used.
 * rng_capture records the next bytes drawn so the host can recompute a
 * deterministic operation (ML-KEM keygen and encaps, ML-DSA keygen) with
 * circl from the same coins.
 */
#ifndef PQB_RNG_H
#define PQB_RNG_H

#include <stddef.h>
#include <stdint.h>

void rng_seed(uint64_t seed, const char *label);
void rng_bytes(uint8_t *out, size_t n);
void rng_capture(uint8_t *buf, size_t cap);
size_t rng_captured(void);

#endif
