/*
 * lmul.S: our own 64-bit multiply for the firmware's "sdk-like" runtime
 * ([build] runtime in experiments/pico.toml). GCC calls __aeabi_lmul for
 * every 64-bit integer multiply on the Cortex-M0+ (Arm run-time ABI,
 * section 4.2: the product mod 2^64 in r0:r1 of the operands in r0:r1 and
 * r2:r3, low word first, so one routine serves signed and unsigned
 * operands). By default the linker takes libgcc's; a pico-sdk build links
 * a shorter one of its own. This one is written here from the schoolbook
 * algorithm, taken from neither. With a = ah:al and b = bh:bl (words),
 *
 *   a * b mod 2^64 = al*bl + ((ah*bl + al*bh) mod 2^32) * 2^32,
 *
 * the cross products need only their low words (one MULS each), and the
 * full 64-bit al*bl comes from the four 16x16 -> 32 products of the
 * halfwords (MULS gives no high word):
 *
 *   al*bl = p00 + (p01 + p10) * 2^16 + p11 * 2^32,  pXY = aX * bY,
 *
 * where p01 + p10 may carry into bit 48. No branch: every call takes the
 * same cycles (25 instructions, 30 cycles by the Cortex-M0+ TRM's table
 * 3-1, plus the caller's BL). experiments/pico/picoboard runtime_test.go
 * runs it in the emulator against C's uint64_t multiply.
 */
    .syntax unified
    .cpu cortex-m0plus
    .thumb

    .section .text.__aeabi_lmul, "ax", %progbits
    .global __aeabi_lmul
    .type __aeabi_lmul, %function
    .thumb_func
__aeabi_lmul:
    push    {r4, r5}
    muls    r1, r2, r1      @ r1 = ah * bl (low word)
    muls    r3, r0, r3      @ r3 = al * bh (low word)
    adds    r1, r1, r3      @ r1 = high word so far: the cross products
    lsrs    r3, r0, #16     @ r3 = a1
    uxth    r0, r0          @ r0 = a0
    lsrs    r4, r2, #16     @ r4 = b1
    uxth    r2, r2          @ r2 = b0
    movs    r5, r0          @ r5 = a0
    muls    r5, r4, r5      @ r5 = p01
    muls    r4, r3, r4      @ r4 = p11
    muls    r3, r2, r3      @ r3 = p10
    muls    r0, r2, r0      @ r0 = p00
    adds    r1, r1, r4      @ high += p11
    adds    r5, r5, r3      @ r5 = mid = p01 + p10, C = its carry (2^48)
    movs    r4, #0          @ (MOVS #imm leaves C alone)
    adcs    r4, r4, r4      @ r4 = carry of mid
    lsls    r4, r4, #16
    adds    r1, r1, r4      @ high += carry * 2^16
    lsrs    r3, r5, #16     @ r3 = mid >> 16
    lsls    r5, r5, #16     @ r5 = mid << 16
    adds    r0, r0, r5      @ low = p00 + (mid << 16), C = carry
    adcs    r1, r1, r3      @ high += (mid >> 16) + carry
    pop     {r4, r5}
    bx      lr
    .size __aeabi_lmul, . - __aeabi_lmul
