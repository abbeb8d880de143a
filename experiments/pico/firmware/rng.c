/* rng.c: see rng.h. */
#include "rng.h"

#include <string.h>

static uint32_t s[4];
static uint8_t *cap_buf;
static size_t cap_len, cap_n;

static uint64_t splitmix64(uint64_t *x) {
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint32_t rotl(uint32_t x, int k) {
    return (x << k) | (x >> (32 - k));
}

static uint32_t next32(void) {
    uint32_t r = rotl(s[0] + s[3], 7) + s[0];
    uint32_t t = s[1] << 9;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 11);
    return r;
}

void rng_seed(uint64_t seed, const char *label) {
    /* Mix the label in with FNV-1a so each scheme has its own stream that
     * does not depend on which other schemes the image holds. */
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *label; label++) {
        h = (h ^ (uint8_t)*label) * 0x100000001b3ull;
    }
    uint64_t x = seed ^ h;
    uint64_t a = splitmix64(&x), b = splitmix64(&x);
    s[0] = (uint32_t)a;
    s[1] = (uint32_t)(a >> 32);
    s[2] = (uint32_t)b;
    s[3] = (uint32_t)(b >> 32);
    cap_buf = NULL;
}

void rng_bytes(uint8_t *out, size_t n) {
    uint8_t *o = out;
    size_t left = n;
    while (left) {
        uint32_t r = next32();
        size_t k = left < 4 ? left : 4;
        memcpy(o, &r, k);
        o += k;
        left -= k;
    }
    if (cap_buf) {
        size_t k = n;
        if (k > cap_len - cap_n) {
            k = cap_len - cap_n;
        }
        memcpy(cap_buf + cap_n, out, k);
        cap_n += k;
    }
}

void rng_capture(uint8_t *buf, size_t cap) {
    cap_buf = buf;
    cap_len = cap;
    cap_n = 0;
}

size_t rng_captured(void) {
    return cap_n;
}

/* PQClean's common/randombytes.h maps randombytes to PQCLEAN_randombytes. */
int PQCLEAN_randombytes(uint8_t *output, size_t n) {
    rng_bytes(output, n);
    return 0;
}
