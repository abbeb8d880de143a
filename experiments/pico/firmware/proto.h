/*
 * proto.h: the serial line protocol (version 1) the firmware speaks.
 *
 * Every line is ASCII:  PQ <seq> <kind> <key>=<value> ... *<crc>\n
 * seq counts lines from 0 at each start of a run, so a host sees a lost
 * line as a gap and a reset as a new "start" before "end". crc is the
 * CRC-32 (IEEE 802.3, the one in zlib and Go's hash/crc32) of everything
 * before " *", as 8 lower-case hex digits. Values never contain spaces.
 * Kinds: start, m (one measurement), v (a chunk of a verification vector),
 * err (a failed on-device check), fault, end. The Go side
 * (experiments/pico/proto.go) is the reference parser.
 */
#ifndef PQB_PROTO_H
#define PQB_PROTO_H

#include <stddef.h>
#include <stdint.h>

void proto_reset(void);
void proto_begin(const char *kind);
void proto_str(const char *key, const char *val);
void proto_u32(const char *key, uint32_t v);
void proto_u64(const char *key, uint64_t v);
void proto_hex(const char *key, const uint8_t *p, size_t n);
void proto_end(void);
uint32_t proto_lines(void);

void proto_fault(uint32_t exc, uint32_t pc, uint32_t lr, uint32_t xpsr);
uint32_t crc32_update(uint32_t crc, const uint8_t *p, size_t n);

#endif
