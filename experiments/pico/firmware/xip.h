/*
 * xip.h: the XIP cache flush that makes every measured operation of a
 * flash image start cold (`[build] code_in = "flash-cold"`).
 *
 * RP2040 datasheet 2.6.3.2: writing 1 to FLUSH (XIP_CTRL base 0x14000000
 * + 0x4) clears every tag; a read of FLUSH waits until the flush is done.
 * Without XIP_COLD, XIP_COLD_START() is empty and the image is unchanged.
 */
#ifndef PQB_XIP_H
#define PQB_XIP_H

#include "rp2040.h"

#define XIP_CTRL_FLUSH 0x14000004u

#ifdef XIP_COLD
#define XIP_COLD_START()                    \
    do {                                    \
        REG(XIP_CTRL_FLUSH) = 1u;           \
        (void)REG(XIP_CTRL_FLUSH);          \
    } while (0)
#else
#define XIP_COLD_START() ((void)0)
#endif

#endif
