/*
 * div.S: our own 32-bit division for the firmware's "sdk-like" runtime
 * ([build] runtime in experiments/pico.toml), on the RP2040's hardware
 * divider as a pico-sdk build divides. Written here from the RP2040
 * datasheet, section 2.3.1.5 "Integer Divider", taken from no library.
 *
 * The divider sits in the single-cycle IO block (SIO, base 0xd0000000;
 * datasheet 2.3.1, register list 2.3.1.7): write the dividend to
 * DIV_UDIVIDEND (0x060) or DIV_SDIVIDEND (0x068) and the divisor to
 * DIV_UDIVISOR (0x064) or DIV_SDIVISOR (0x06c); a write starts the
 * calculation, which takes 8 cycles, and DIV_QUOTIENT (0x070) and
 * DIV_REMAINDER (0x074) then hold the result. The core does not stall:
 * the program waits the 8 cycles itself (here four taken branches, two
 * cycles each by the Cortex-M0+ TRM's table 3-1) before it reads. Signed
 * results round toward zero, the remainder taking the dividend's sign, as
 * C's / and %; INT_MIN / -1 is INT_MIN remainder 0, the wrap C leaves
 * undefined and Go defines.
 *
 * The Arm run-time ABI (section 4.3.1) names the routines: __aeabi_idiv
 * and __aeabi_uidiv return the quotient in r0; __aeabi_idivmod and
 * __aeabi_uidivmod the quotient in r0 and the remainder in r1, so one
 * body serves each pair. A zero divisor never reaches the hardware: by
 * the ABI's section 4.3.2 the routine returns what __aeabi_idiv0 returns,
 * called with the quotient libgcc passes it too: 0 for a zero dividend,
 * else INT_MAX or INT_MIN by the dividend's sign (UINT_MAX unsigned); the
 * remainder is the dividend. libgcc's default __aeabi_idiv0 returns its
 * argument. An interrupt handler that divided between our write and read
 * would have to save and restore the divider (datasheet 2.3.1.5); the
 * firmware's handlers (SysTick's, and with [build] usb_irq_us those of
 * firmware/usbirq.c) do not divide.
 *
 * Cycles by the TRM (the caller's BL not counted): 18 for a non-zero
 * divisor, signed or unsigned, whatever the operands (no data-dependent
 * branch). experiments/pico/picoboard runtime_test.go runs each routine
 * in the emulator against Go's division.
 */
    .syntax unified
    .cpu cortex-m0plus
    .thumb

    .equ SIO_BASE_HI, 0xd0          @ SIO_BASE = 0xd0 << 24
    .equ DIV_UDIVIDEND, 0x060
    .equ DIV_UDIVISOR, 0x064
    .equ DIV_SDIVIDEND, 0x068
    .equ DIV_SDIVISOR, 0x06c
    .equ DIV_QUOTIENT, 0x070
    .equ DIV_REMAINDER, 0x074

@ wait8 spends the divider's 8 cycles: four taken branches, 2 cycles each.
.macro wait8
    b       1f
1:  b       2f
2:  b       3f
3:  b       4f
4:
.endm

@ One section for the four: they share the zero-divisor path.
    .section .text.__aeabi_div, "ax", %progbits
    .global __aeabi_uidiv
    .type __aeabi_uidiv, %function
    .global __aeabi_uidivmod
    .type __aeabi_uidivmod, %function
    .thumb_func
__aeabi_uidiv:
    .thumb_func
__aeabi_uidivmod:
    cmp     r1, #0                  @ 1
    beq     .Lu_zero                @ 1 not taken
    movs    r2, #SIO_BASE_HI        @ 1
    lsls    r2, r2, #24             @ 1: r2 = SIO base
    str     r0, [r2, #DIV_UDIVIDEND] @ 1 (SIO: single-cycle)
    str     r1, [r2, #DIV_UDIVISOR] @ 1: starts the 8 cycles
    wait8                           @ 8
    ldr     r1, [r2, #DIV_REMAINDER] @ 1
    ldr     r0, [r2, #DIV_QUOTIENT] @ 1
    bx      lr                      @ 2
.Lu_zero:
    movs    r1, r0                  @ remainder = dividend
    cmp     r0, #0
    beq     .Ldiv0                  @ 0 / 0: pass 0
    movs    r0, #0
    mvns    r0, r0                  @ UINT_MAX
    b       .Ldiv0

    .global __aeabi_idiv
    .type __aeabi_idiv, %function
    .global __aeabi_idivmod
    .type __aeabi_idivmod, %function
    .thumb_func
__aeabi_idiv:
    .thumb_func
__aeabi_idivmod:
    cmp     r1, #0
    beq     .Li_zero
    movs    r2, #SIO_BASE_HI
    lsls    r2, r2, #24
    str     r0, [r2, #DIV_SDIVIDEND]
    str     r1, [r2, #DIV_SDIVISOR]
    wait8
    ldr     r1, [r2, #DIV_REMAINDER]
    ldr     r0, [r2, #DIV_QUOTIENT]
    bx      lr
.Li_zero:
    movs    r1, r0                  @ remainder = dividend
    cmp     r0, #0
    beq     .Ldiv0                  @ 0 / 0: pass 0
    blt     1f
    movs    r0, #0
    mvns    r0, r0
    lsrs    r0, r0, #1              @ INT_MAX for a positive dividend
    b       .Ldiv0
1:  movs    r0, #1
    lsls    r0, r0, #31             @ INT_MIN for a negative one
@ .Ldiv0 returns __aeabi_idiv0(r0) in r0 and the dividend (r1) in r1.
.Ldiv0:
    push    {r1, lr}
    bl      __aeabi_idiv0
    pop     {r1, pc}
