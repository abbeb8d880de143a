/* dsacount.h: counts of ML-DSA signing's rejection loop, per signature.
 *
 * FIPS 204 Algorithm 7 signs in a loop: each iteration draws y, derives
 * the challenge c and rejects when z reveals the key, when w0 - cs2 does,
 * when ct0 is too large, or when the hint has more than omega ones. An
 * iteration's cost is deterministic once its path is known, so the cycles
 * of one signature are an affine function of how often each check ran:
 * the counts below let the analysis separate the cost of one iteration
 * from the number of iterations the message needed.
 *
 * The counts come from GNU ld's --wrap of four PQClean functions of each
 * ML-DSA parameter set in the image (dsacount.c, compiled once per set):
 * PQClean's sources are not changed. The wrappers cost a call and an
 * increment each, a few dozen cycles per iteration against about a
 * million. */
#ifndef PQB_DSACOUNT_H
#define PQB_DSACOUNT_H

#include <stdint.h>

typedef struct {
    uint32_t iters;      /* iterations: the challenge c derived (poly_challenge) */
    uint32_t r0_checks;  /* iterations whose z passed: the w0 - cs2 check ran */
    uint32_t ct0_checks; /* iterations whose w0 - cs2 passed: the ct0 check ran */
    uint32_t hints;      /* iterations whose ct0 passed: the hint was made */
} dsacount_t;

/* dsacount: the counts since the last reset (bench.c defines it). */
extern volatile dsacount_t dsacount;

#endif
