/* board.h: clocks, UART0, time and stack measurement of the RP2040. */
#ifndef PQB_BOARD_H
#define PQB_BOARD_H

#include <stdint.h>

#ifndef SYS_CLOCK_HZ
#define SYS_CLOCK_HZ 133000000u
#endif
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

uint32_t heap_high_water(void);
uint32_t heap_capacity(void);

#endif
