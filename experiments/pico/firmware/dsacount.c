/* dsacount.c: GNU ld --wrap wrappers that count ML-DSA signing's
 * iterations and checks (dsacount.h) for one parameter set.
 *
 * Compiled once per ML-DSA set in the image with DSACOUNT_NS set to the
 * set's PQClean prefix (e.g. PQCLEAN_MLDSA44_CLEAN) and the set's source
 * folder on the include path; the image links with
 * -Wl,--wrap=<prefix>_poly_challenge, ..._polyveck_chknorm and
 * ..._polyveck_make_hint (picoboard.dsaCountLDFlags). The two
 * polyveck_chknorm calls of an iteration (FIPS 204 Algorithm 7, lines
 * 23-28 of the round loop: ||r0|| and ||ct0||) differ by their bound:
 * GAMMA2 - BETA for r0, GAMMA2 for ct0. */
#include <stdint.h>

#include "dsacount.h"
#include "params.h"
#include "poly.h"
#include "polyvec.h"

#ifndef DSACOUNT_NS
#error "build with -DDSACOUNT_NS=<the set's PQClean prefix> (picoboard.Build)"
#endif

#define DSC_CAT2(a, b) a##b
#define DSC_CAT(a, b) DSC_CAT2(a, b)
#define DSC_FN(f) DSC_CAT(DSACOUNT_NS, f)
#define DSC_REAL(f) DSC_CAT(__real_, DSC_FN(f))
#define DSC_WRAP(f) DSC_CAT(__wrap_, DSC_FN(f))

void DSC_REAL(_poly_challenge)(poly *c, const uint8_t seed[CTILDEBYTES]);
void DSC_WRAP(_poly_challenge)(poly *c, const uint8_t seed[CTILDEBYTES]);
int DSC_REAL(_polyveck_chknorm)(const polyveck *v, int32_t B);
int DSC_WRAP(_polyveck_chknorm)(const polyveck *v, int32_t B);
unsigned int DSC_REAL(_polyveck_make_hint)(polyveck *h, const polyveck *v0, const polyveck *v1);
unsigned int DSC_WRAP(_polyveck_make_hint)(polyveck *h, const polyveck *v0, const polyveck *v1);

void DSC_WRAP(_poly_challenge)(poly *c, const uint8_t seed[CTILDEBYTES]) {
    dsacount.iters++;
    DSC_REAL(_poly_challenge)(c, seed);
}

int DSC_WRAP(_polyveck_chknorm)(const polyveck *v, int32_t B) {
    if (B == GAMMA2) {
        dsacount.ct0_checks++;
    } else {
        dsacount.r0_checks++;
    }
    return DSC_REAL(_polyveck_chknorm)(v, B);
}

unsigned int DSC_WRAP(_polyveck_make_hint)(polyveck *h, const polyveck *v0, const polyveck *v1) {
    dsacount.hints++;
    return DSC_REAL(_polyveck_make_hint)(h, v0, v1);
}
