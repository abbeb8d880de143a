/*
 * crt.c: vector table, reset handler, fault reporting and the newlib
 * system calls of a bare-metal RAM-only image.
 *
 * A RAM-only image is loaded in place, so there is no .data copy; only .bss
 * is zeroed. An image whose code is in flash (link-flash.ld, CODE_IN_FLASH)
 * first copies .data from flash to SRAM. malloc (PQClean's fips202.c and mbedTLS use it) gets memory
 * from _sbrk, which hands out the fixed arena [__heap_start, __heap_end)
 * laid out by link.ld below the stack, and fails with ENOMEM past it
 * instead of walking into the painted stack.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "board.h"
#include "proto.h"
#include "rp2040.h"

extern uint32_t __bss_start, __bss_end, __heap_start, __heap_end, __StackTop;
extern int main(void);

void reset_handler(void);
void fault_handler(void);
void systick_handler(void);
static void default_handler(void);
#ifdef USB_IRQ_US
/* usbirq.c: the USB stdio interrupt load, on TIMER_IRQ_3 and IRQ 31. */
void timer_irq3_handler(void);
void usb_worker_irq(void);
#define IRQ3_HANDLER timer_irq3_handler
#define IRQ31_HANDLER usb_worker_irq
#else
#define IRQ3_HANDLER default_handler
#define IRQ31_HANDLER default_handler
#endif

/* ARMv6-M vector table: initial SP, reset, NMI, HardFault, then SVCall at
 * 11, PendSV at 14, SysTick at 15 and the 32 RP2040 IRQs (datasheet 2.3.2).
 * 48 entries, placed 256-byte aligned by link.ld for VTOR. */
__attribute__((section(".vectors"), used)) void (*const __vectors[48])(void) = {
    (void (*)(void))(&__StackTop),
    reset_handler,
    default_handler, /* NMI */
    fault_handler,   /* HardFault */
    0, 0, 0, 0, 0, 0, 0,
    default_handler, /* SVCall */
    0, 0,
    default_handler, /* PendSV */
    systick_handler,
    default_handler, default_handler, default_handler, IRQ3_HANDLER,
    default_handler, default_handler, default_handler, default_handler,
    default_handler, default_handler, default_handler, default_handler,
    default_handler, default_handler, default_handler, default_handler,
    default_handler, default_handler, default_handler, default_handler,
    default_handler, default_handler, default_handler, default_handler,
    default_handler, default_handler, default_handler, default_handler,
    default_handler, default_handler, default_handler, IRQ31_HANDLER,
};

#ifdef CODE_IN_FLASH
extern uint32_t __data_load, __data_start, __data_end;

/* copy_data copies .data from its load address in flash to SRAM, and
 * zero_bss clears .bss. Both write through a volatile pointer so that GCC
 * does not turn their loops into memcpy and memset calls: with the
 * "sdk-like" runtime those routines run from SRAM that this copy fills
 * (link-flash.ld's .time_critical, experiments/pico/runtime/memops.S). */
static void copy_data(void) {
    const uint32_t *src = &__data_load;
    for (volatile uint32_t *p = &__data_start; p < &__data_end; p++) {
        *p = *src++;
    }
}

static void zero_bss(void) {
    for (volatile uint32_t *p = &__bss_start; p < &__bss_end; p++) {
        *p = 0;
    }
}
#endif

void reset_handler(void) {
#ifdef CODE_IN_FLASH
    copy_data();
    zero_bss();
#else
    for (uint32_t *p = &__bss_start; p < &__bss_end; p++) {
        *p = 0;
    }
#endif
    main();
    for (;;) {
        __asm__ volatile("wfi");
    }
}

/* fault_report prints the stacked PC, LR and xPSR of the faulting context
 * (ARMv6-M B1.5.6 exception frame: r0-r3, r12, lr, pc, xpsr) as a protocol
 * line, so the host fails the run with the PC instead of hanging. */
__attribute__((used)) void fault_report(const uint32_t *frame, uint32_t exc) {
    proto_fault(exc, frame[6], frame[5], frame[7]);
    for (;;) {
        __asm__ volatile("bkpt #0x7f");
    }
}

__attribute__((naked)) void fault_handler(void) {
    __asm__ volatile(
        "movs r0, #4\n"
        "mov r1, lr\n"
        "tst r0, r1\n"
        "beq 1f\n"
        "mrs r0, psp\n"
        "b 2f\n"
        "1: mrs r0, msp\n"
        "2: mrs r1, ipsr\n"
        "ldr r2, =fault_report\n"
        "bx r2\n"
        ".ltorg\n");
}

static void default_handler(void) {
    fault_handler();
}

/* ---- newlib system calls ---- */

static uint8_t *heap_brk;
static uint8_t *heap_peak;

void *_sbrk(ptrdiff_t incr) {
    if (heap_brk == NULL) {
        heap_brk = (uint8_t *)&__heap_start;
        heap_peak = heap_brk;
    }
    uint8_t *prev = heap_brk;
    if (incr > 0 && (size_t)incr > (size_t)((uint8_t *)&__heap_end - heap_brk)) {
        errno = ENOMEM;
        return (void *)-1;
    }
    heap_brk += incr;
    if (heap_brk > heap_peak) {
        heap_peak = heap_brk;
    }
    return prev;
}

uint32_t heap_high_water(void) {
    return heap_peak ? (uint32_t)(heap_peak - (uint8_t *)&__heap_start) : 0;
}

uint32_t heap_capacity(void) {
    return (uint32_t)((uint8_t *)&__heap_end - (uint8_t *)&__heap_start);
}

int _write(int fd, const char *buf, int len) {
    (void)fd;
    for (int i = 0; i < len; i++) {
        uart_putc(buf[i]);
    }
    return len;
}

int _read(int fd, char *buf, int len) {
    (void)fd;
    (void)buf;
    (void)len;
    return 0;
}

int _close(int fd) {
    (void)fd;
    return -1;
}

int _fstat(int fd, struct stat *st) {
    (void)fd;
    st->st_mode = S_IFCHR;
    return 0;
}

int _isatty(int fd) {
    (void)fd;
    return 1;
}

int _lseek(int fd, int off, int whence) {
    (void)fd;
    (void)off;
    (void)whence;
    return 0;
}

void _exit(int code) {
    (void)code;
    for (;;) {
        __asm__ volatile("bkpt #0x7e");
    }
}

int _kill(int pid, int sig) {
    (void)pid;
    (void)sig;
    errno = EINVAL;
    return -1;
}

int _getpid(void) {
    return 1;
}
