/*
 * rp2040.h: the few RP2040 registers this bare-metal firmware touches.
 *
 * Addresses and bit positions are from the RP2040 datasheet (build
 * 2023-06); each block names its section. Only what the benchmark needs is
 * here: resets (2.14), clocks (2.15), XOSC (2.16), PLL (2.18), IO/pads
 * (2.19), UART (4.2), timer (4.6), watchdog tick (4.7) and the Cortex-M0+
 * system control space (2.4.8: SysTick, VTOR).
 */
#ifndef PQB_RP2040_H
#define PQB_RP2040_H

#include <stdint.h>

#define REG(addr) (*(volatile uint32_t *)(uintptr_t)(addr))
/* Atomic register aliases (2.1.2): +0x1000 XOR, +0x2000 set, +0x3000 clear. */
#define REG_SET(addr) REG((addr) + 0x2000u)
#define REG_CLR(addr) REG((addr) + 0x3000u)

/* 2.14 Subsystem resets. */
#define RESETS_BASE 0x4000c000u
#define RESETS_RESET (RESETS_BASE + 0x0u)
#define RESETS_DONE (RESETS_BASE + 0x8u)
#define RESET_IO_BANK0 (1u << 5)
#define RESET_PADS_BANK0 (1u << 8)
#define RESET_PLL_SYS (1u << 12)
#define RESET_TIMER (1u << 21)
#define RESET_UART0 (1u << 22)

/* 2.15 Clocks. */
#define CLOCKS_BASE 0x40008000u
#define CLK_REF_CTRL (CLOCKS_BASE + 0x30u)
#define CLK_REF_DIV (CLOCKS_BASE + 0x34u)
#define CLK_REF_SELECTED (CLOCKS_BASE + 0x38u)
#define CLK_SYS_CTRL (CLOCKS_BASE + 0x3cu)
#define CLK_SYS_DIV (CLOCKS_BASE + 0x40u)
#define CLK_SYS_SELECTED (CLOCKS_BASE + 0x44u)
#define CLK_PERI_CTRL (CLOCKS_BASE + 0x48u)
#define CLK_SYS_RESUS_CTRL (CLOCKS_BASE + 0x78u)
#define CLK_REF_SRC_XOSC 2u
#define CLK_SYS_SRC_AUX 1u
#define CLK_SYS_AUXSRC_PLL_SYS (0u << 5)
#define CLK_PERI_ENABLE (1u << 11)
#define CLK_PERI_AUXSRC_CLK_SYS (0u << 5)

/* 2.16 Crystal oscillator. */
#define XOSC_BASE 0x40024000u
#define XOSC_CTRL (XOSC_BASE + 0x00u)
#define XOSC_STATUS (XOSC_BASE + 0x04u)
#define XOSC_STARTUP (XOSC_BASE + 0x0cu)
#define XOSC_FREQ_1_15MHZ 0xaa0u
#define XOSC_ENABLE (0xfabu << 12)
#define XOSC_STABLE (1u << 31)

/* 2.18 PLL: f_out = (f_ref / REFDIV) * FBDIV / (POSTDIV1 * POSTDIV2). */
#define PLL_SYS_BASE 0x40028000u
#define PLL_CS (PLL_SYS_BASE + 0x0u)
#define PLL_PWR (PLL_SYS_BASE + 0x4u)
#define PLL_FBDIV_INT (PLL_SYS_BASE + 0x8u)
#define PLL_PRIM (PLL_SYS_BASE + 0xcu)
#define PLL_CS_LOCK (1u << 31)
#define PLL_PWR_PD (1u << 0)
#define PLL_PWR_POSTDIVPD (1u << 3)
#define PLL_PWR_VCOPD (1u << 5)

/* 2.19 GPIO: IO_BANK0 GPIOn_CTRL at 0x004 + 8n, function 2 = UART. */
#define IO_BANK0_BASE 0x40014000u
#define GPIO_CTRL(n) (IO_BANK0_BASE + 0x004u + 8u * (n))
#define GPIO_FUNC_UART 2u
#define PADS_BANK0_BASE 0x4001c000u
#define PADS_GPIO(n) (PADS_BANK0_BASE + 0x04u + 4u * (n))
#define PADS_IE (1u << 6)
#define PADS_OD (1u << 7)

/* 4.2 UART (PL011). */
#define UART0_BASE 0x40034000u
#define UART_DR (UART0_BASE + 0x00u)
#define UART_FR (UART0_BASE + 0x18u)
#define UART_IBRD (UART0_BASE + 0x24u)
#define UART_FBRD (UART0_BASE + 0x28u)
#define UART_LCR_H (UART0_BASE + 0x2cu)
#define UART_CR (UART0_BASE + 0x30u)
#define UART_FR_TXFF (1u << 5)
#define UART_FR_BUSY (1u << 3)
#define UART_LCR_WLEN8 (3u << 5)
#define UART_LCR_FEN (1u << 4)
#define UART_CR_EN (1u << 0)
#define UART_CR_TXE (1u << 8)
#define UART_CR_RXE (1u << 9)

/* 4.6 Timer: a 64-bit microsecond counter fed by the watchdog tick. */
#define TIMER_BASE 0x40054000u
#define TIMER_RAWH (TIMER_BASE + 0x24u)
#define TIMER_RAWL (TIMER_BASE + 0x28u)

/* 4.7 Watchdog: TICK divides clk_ref down to the 1 MHz reference tick. */
#define WATCHDOG_BASE 0x40058000u
#define WATCHDOG_TICK (WATCHDOG_BASE + 0x2cu)
#define WATCHDOG_TICK_ENABLE (1u << 9)

/* Cortex-M0+ system control space (ARMv6-M ARM B3.2, B3.3). */
#define SYST_CSR 0xe000e010u
#define SYST_RVR 0xe000e014u
#define SYST_CVR 0xe000e018u
#define SCB_ICSR 0xe000ed04u
#define SCB_ICSR_PENDSTSET (1u << 26)
#define SCB_VTOR 0xe000ed08u

#endif
