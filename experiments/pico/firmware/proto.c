/* proto.c: see proto.h for the line format. */
#include "proto.h"

#include "board.h"

#define LINE_MAX 600

static char line[LINE_MAX];
static size_t len;
static uint32_t seq;
static int overflow;

uint32_t crc32_update(uint32_t crc, const uint8_t *p, size_t n) {
    /* Bitwise reflected CRC-32, polynomial 0xEDB88320: slow but tableless;
     * it only runs outside timed regions. */
    crc = ~crc;
    while (n--) {
        crc ^= *p++;
        for (int k = 0; k < 8; k++) {
            crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
        }
    }
    return ~crc;
}

static void put(char c) {
    if (len < LINE_MAX - 12) {
        line[len++] = c;
    } else {
        overflow = 1;
    }
}

static void puts_(const char *s) {
    while (*s) {
        put(*s++);
    }
}

static void put_dec(uint64_t v) {
    char tmp[21];
    int i = 0;
    do {
        tmp[i++] = (char)('0' + (v % 10u));
        v /= 10u;
    } while (v);
    while (i) {
        put(tmp[--i]);
    }
}

static const char hexdig[] = "0123456789abcdef";

static void put_hex32(uint32_t v) {
    for (int s = 28; s >= 0; s -= 4) {
        put(hexdig[(v >> s) & 0xfu]);
    }
}

void proto_reset(void) {
    seq = 0;
}

uint32_t proto_lines(void) {
    return seq;
}

void proto_begin(const char *kind) {
    len = 0;
    overflow = 0;
    puts_("PQ ");
    put_dec(seq);
    put(' ');
    puts_(kind);
}

void proto_str(const char *key, const char *val) {
    put(' ');
    puts_(key);
    put('=');
    for (; *val; val++) {
        put(*val == ' ' ? ',' : *val);
    }
}

void proto_u32(const char *key, uint32_t v) {
    proto_u64(key, v);
}

void proto_u64(const char *key, uint64_t v) {
    put(' ');
    puts_(key);
    put('=');
    put_dec(v);
}

void proto_hex(const char *key, const uint8_t *p, size_t n) {
    put(' ');
    puts_(key);
    put('=');
    for (size_t i = 0; i < n; i++) {
        put(hexdig[p[i] >> 4]);
        put(hexdig[p[i] & 0xfu]);
    }
}

void proto_end(void) {
    if (overflow) {
        /* Never send a silently cut line: say so instead. */
        len = 0;
        overflow = 0;
        puts_("PQ ");
        put_dec(seq);
        puts_(" err msg=line_overflow");
    }
    uint32_t crc = crc32_update(0, (const uint8_t *)line, len);
    line[len++] = ' ';
    line[len++] = '*';
    for (int s = 28; s >= 0; s -= 4) {
        line[len++] = hexdig[(crc >> s) & 0xfu];
    }
    line[len++] = '\n';
    for (size_t i = 0; i < len; i++) {
        uart_putc(line[i]);
    }
    seq++;
}

void proto_fault(uint32_t exc, uint32_t pc, uint32_t lr, uint32_t xpsr) {
    proto_begin("fault");
    proto_u32("exc", exc);
    put(' ');
    puts_("pc=");
    put_hex32(pc);
    puts_(" lr=");
    put_hex32(lr);
    puts_(" xpsr=");
    put_hex32(xpsr);
    proto_end();
    uart_flush();
}
