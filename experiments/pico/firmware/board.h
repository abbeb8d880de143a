/* board.h: clocks, UART0, time and stack measurement of the RP2040. */
#ifndef PQB_BOARD_H
#define PQB_BOARD_H

#include <stdint.h>

/* The clock and its PLL_SYS dividers come from the build
 * (experiments/pico/picoboard PLLFor, RP2040 datasheet 2.18.2): no default,
 * so the firmware cannot run at a clock its build did not record. */
#if !defined(SYS_CLOCK_HZ) || !defined(PLL_SYS_FBDIV) || !defined(PLL_SYS_POSTDIV1) || !defined(PLL_SYS_POSTDIV2)
#error "build with -DSYS_CLOCK_HZ, -DPLL_SYS_FBDIV, -DPLL_SYS_POSTDIV1 and -DPLL_SYS_POSTDIV2 (picoboard.Build)"
#endif
_Static_assert(12000000ull * PLL_SYS_FBDIV / (PLL_SYS_POSTDIV1 * PLL_SYS_POSTDIV2) == SYS_CLOCK_HZ,
               "SYS_CLOCK_HZ is not what the PLL dividers make from the 12 MHz crystal");
#ifndef UART_BAUD
#define UART_BAUD 115200u
#endif

void board_init(void);
void uart_putc(char c);
void uart_flush(void);
uint64_t time_us(void);
uint64_t cycles(void);

/* stack_paint fills the unused stack below the caller's frame with a
 * pattern; stack_used returns how many bytes below the painting point were
 * touched since (the op's peak stack depth). */
void stack_paint(void);
uint32_t stack_used(void);
uint32_t stack_capacity(void);

/* usb_irq_start starts the USB stdio interrupt load (usbirq.c; built
 * with USB_IRQ_US only). */
void usb_irq_start(void);

uint32_t heap_high_water(void);
uint32_t heap_capacity(void);

#endif
