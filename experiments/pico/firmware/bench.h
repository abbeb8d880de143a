/* bench.h: shared helpers of the benchmark driver (bench.c, classic.c). */
#ifndef PQB_BENCH_H
#define PQB_BENCH_H

#include <stddef.h>
#include <stdint.h>

/* MSG_BYTES: the bytes every signature scheme signs, from the build
 * ([build] message_bytes, picoboard.CheckMessageBytes: 1..4096). */
#if !defined(MSG_BYTES) || MSG_BYTES < 1 || MSG_BYTES > 4096
#error "build with -DMSG_BYTES=1..4096 (picoboard.Build)"
#endif

/* A timed span: call bench_start right before the operation and
 * bench_stop right after; bench_stop fills the fields. */
typedef struct {
    uint64_t us0, cyc0;
    uint64_t us, cyc;
    uint32_t stack, heap;
} span_t;

void bench_start(span_t *s);
void bench_stop(span_t *s);
void bench_emit(const char *scheme, const char *op, uint32_t i, const span_t *s, int ok);
void bench_fail(const char *scheme, const char *op, uint32_t i, const char *msg);
void bench_vector(const char *scheme, const char *field, const uint8_t *p, size_t n);

#ifdef WITH_CLASSIC
void bench_classic(uint64_t seed);
#endif

#endif
