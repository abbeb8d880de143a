/*
 * board.c: bring the RP2040 up to the build's clock (SYS_CLOCK_HZ) and
 * provide UART0 output, the 1 MHz timer, a 64-bit cycle counter and stack
 * painting.
 *
 * Clocks (RP2040 datasheet 2.15-2.18): the 12 MHz crystal drives clk_ref;
 * PLL_SYS runs its VCO at 12 MHz * PLL_SYS_FBDIV and divides by
 * PLL_SYS_POSTDIV1 and PLL_SYS_POSTDIV2, all computed by the build
 * (picoboard.PLLFor): 133 MHz is VCO 1596 MHz / (6 * 2), pico-sdk's
 * default 125 MHz VCO 1500 MHz / (6 * 2); clk_sys and clk_peri take it. The
 * watchdog tick divides clk_ref by 12 to give the timer its 1 MHz (4.7).
 * UART0 sits on GP0 (TX) and GP1 (RX), 8N1 (4.2).
 */
#include "board.h"

#include "rp2040.h"

extern uint32_t __StackLimit, __StackTop;

#define STACK_PATTERN 0xc5a5c5a5u

static void unreset(uint32_t bits) {
    REG_CLR(RESETS_RESET) = bits;
    while ((REG(RESETS_DONE) & bits) != bits) {
    }
}

static void clocks_init(void) {
    REG(CLK_SYS_RESUS_CTRL) = 0;

    /* 2.16.7: start the crystal; STARTUP delay in units of 256 cycles,
     * ~1 ms at 12 MHz = (12000 + 128) / 256 = 47. */
    REG(XOSC_CTRL) = XOSC_FREQ_1_15MHZ;
    REG(XOSC_STARTUP) = 47;
    REG_SET(XOSC_CTRL) = XOSC_ENABLE;
    while (!(REG(XOSC_STATUS) & XOSC_STABLE)) {
    }

    /* clk_ref <- XOSC, clk_sys <- clk_ref while the PLL is reprogrammed. */
    REG(CLK_REF_CTRL) = CLK_REF_SRC_XOSC;
    while (REG(CLK_REF_SELECTED) != (1u << CLK_REF_SRC_XOSC)) {
    }
    REG(CLK_REF_DIV) = 1u << 8;
    REG_CLR(CLK_SYS_CTRL) = 1u; /* SRC = clk_ref */
    while (REG(CLK_SYS_SELECTED) != 1u) {
    }

    /* 2.18.2: program PLL_SYS, REFDIV 1, then the build's FBDIV and
     * post dividers. */
    REG_SET(RESETS_RESET) = RESET_PLL_SYS;
    unreset(RESET_PLL_SYS);
    REG(PLL_CS) = 1;
    REG(PLL_FBDIV_INT) = PLL_SYS_FBDIV;
    REG_CLR(PLL_PWR) = PLL_PWR_PD | PLL_PWR_VCOPD;
    while (!(REG(PLL_CS) & PLL_CS_LOCK)) {
    }
    REG(PLL_PRIM) = ((uint32_t)PLL_SYS_POSTDIV1 << 16) | ((uint32_t)PLL_SYS_POSTDIV2 << 12);
    REG_CLR(PLL_PWR) = PLL_PWR_POSTDIVPD;

    /* clk_sys <- PLL_SYS through the glitchless aux mux (2.15.3.2). */
    REG(CLK_SYS_CTRL) = CLK_SYS_AUXSRC_PLL_SYS;
    REG(CLK_SYS_DIV) = 1u << 8;
    REG(CLK_SYS_CTRL) = CLK_SYS_AUXSRC_PLL_SYS | CLK_SYS_SRC_AUX;
    while (REG(CLK_SYS_SELECTED) != (1u << CLK_SYS_SRC_AUX)) {
    }
    REG(CLK_PERI_CTRL) = CLK_PERI_ENABLE | CLK_PERI_AUXSRC_CLK_SYS;

    /* 1 MHz tick for the timer: clk_ref (12 MHz) / 12. */
    REG(WATCHDOG_TICK) = WATCHDOG_TICK_ENABLE | 12u;
}

static void uart_init(void) {
    unreset(RESET_IO_BANK0 | RESET_PADS_BANK0 | RESET_UART0 | RESET_TIMER);
    /* 4.2.7.1: divisor = f_peri / (16 * baud) in 16.6 fixed point. */
    uint32_t div = (8u * SYS_CLOCK_HZ) / UART_BAUD;
    uint32_t ibrd = div >> 7;
    uint32_t fbrd = ((div & 0x7fu) + 1u) / 2u;
    REG(UART_IBRD) = ibrd;
    REG(UART_FBRD) = fbrd;
    REG(UART_LCR_H) = UART_LCR_WLEN8 | UART_LCR_FEN;
    REG(UART_CR) = UART_CR_EN | UART_CR_TXE | UART_CR_RXE;
    REG(PADS_GPIO(1)) |= PADS_IE;
    REG(GPIO_CTRL(0)) = GPIO_FUNC_UART;
    REG(GPIO_CTRL(1)) = GPIO_FUNC_UART;
}

static volatile uint32_t systick_wraps;

void systick_handler(void) {
    systick_wraps++;
}

void board_init(void) {
    clocks_init();
    uart_init();
    /* SysTick counts processor clock cycles down from 2^24 - 1; its
     * interrupt extends it to 64 bits (ARMv6-M B3.3). */
    REG(SYST_RVR) = 0x00ffffffu;
    REG(SYST_CVR) = 0;
    REG(SYST_CSR) = 7u; /* ENABLE | TICKINT | CLKSOURCE=processor */
#ifdef USB_IRQ_US
    /* A pico-sdk program's USB stdio interrupts from here on (usbirq.c). */
    usb_irq_start();
#endif
}

void uart_putc(char c) {
    while (REG(UART_FR) & UART_FR_TXFF) {
    }
    REG(UART_DR) = (uint8_t)c;
}

void uart_flush(void) {
    while (REG(UART_FR) & UART_FR_BUSY) {
    }
}

uint64_t time_us(void) {
    /* 4.6.4: read RAWH, RAWL, RAWH again until the high word is stable. */
    uint32_t hi = REG(TIMER_RAWH), lo, hi2;
    for (;;) {
        lo = REG(TIMER_RAWL);
        hi2 = REG(TIMER_RAWH);
        if (hi == hi2) {
            break;
        }
        hi = hi2;
    }
    return ((uint64_t)hi << 32) | lo;
}

uint64_t cycles(void) {
    /* With interrupts masked, a reload that happened but whose interrupt is
     * still pending shows in ICSR.PENDSTSET (ARMv6-M B3.2.4): count it and
     * re-read the counter, which has then certainly wrapped (the next wrap
     * is 2^24 cycles away). */
    uint32_t w, v;
    __asm__ volatile("cpsid i" ::: "memory");
    w = systick_wraps;
    v = REG(SYST_CVR);
    if (REG(SCB_ICSR) & SCB_ICSR_PENDSTSET) {
        w++;
        v = REG(SYST_CVR);
    }
    __asm__ volatile("cpsie i" ::: "memory");
    return ((uint64_t)w << 24) + (0x00ffffffu - v);
}

/* Painting stops this far below the SP of stack_paint's caller, leaving
 * room for stack_paint's own frame. */
#define PAINT_GAP 64u
static uint32_t *paint_top;

__attribute__((noinline)) void stack_paint(void) {
    uint32_t sp;
    __asm__ volatile("mov %0, sp" : "=r"(sp));
    paint_top = (uint32_t *)((sp - PAINT_GAP) & ~3u);
    for (uint32_t *p = &__StackLimit; p < paint_top; p++) {
        *p = STACK_PATTERN;
    }
}

__attribute__((noinline)) uint32_t stack_used(void) {
    uint32_t *p = &__StackLimit;
    while (p < paint_top && *p == STACK_PATTERN) {
        p++;
    }
    /* Bytes from the painted top down to the deepest word touched, plus
     * the gap that was never painted (an upper bound on the op's depth). */
    return (uint32_t)((uint8_t *)paint_top - (uint8_t *)p) + PAINT_GAP;
}

uint32_t stack_capacity(void) {
    return (uint32_t)((uint8_t *)&__StackTop - (uint8_t *)&__StackLimit);
}
