/*
 * memops.S: our own memcpy and memset for the firmware's "sdk-like"
 * runtime ([build] runtime in experiments/pico.toml), costing what a
 * pico-sdk build's cost. Such a build routes memcpy, memset and their
 * __aeabi_ forms (Arm run-time ABI, section 4.3.4) to the RP2040 boot ROM
 * (pico-sdk src/rp2_common/pico_mem_ops/mem_ops_aeabi.S: GNU ld --wrap of
 * the eight names, each wrapper loading the ROM routine's address from a
 * table in RAM, aeabi_mem_funcs, and jumping to it). Newlib's routines,
 * which the firmware links otherwise, are C. This file is written here
 * from the algorithm of the ROM's routines as pico-bootrom's
 * bootrom/bootrom_misc.S describes them (functions __memcpy, __memcpy_44,
 * __memset, __memset_4); no instruction of it is taken from there. The
 * algorithm:
 *
 *   memcpy(d, s, n): fewer than 8 bytes are copied by a jump into an
 *   unrolled run of byte copies, the last n of seven. Else, when d and s
 *   are not co-aligned (d - s not a multiple of 4), one byte at a time,
 *   from the end. Else a byte and then a halfword bring d (and so s) to a
 *   word boundary, 16 bytes go per LDMIA/STMIA of four registers, and the
 *   8, 4, 2 and 1 bytes left are copied as the low four bits of the count
 *   say. __aeabi_memcpy4 and 8 (d and s word aligned) start at the words.
 *
 *   memset(d, c, n): fewer than 8 bytes by a jump into unrolled byte
 *   stores. Else a byte and a halfword align d, c is spread over a word,
 *   16 bytes go per STMIA of four registers, then 8, 4, 2 and 1 as the
 *   count says. __aeabi_memset4 and 8 start at the words.
 *
 * The instructions are ours (the tails test the count's bits through N
 * and C; the short copies jump with ADD PC and leave r0 alone). Counted by
 * the Cortex-M0+ TRM's table 3-1 on every length 0-300 and every
 * alignment of d and s, a call through our entry point takes between 7
 * fewer and 3 more cycles than the ROM's routine through the SDK's
 * wrapper (co-aligned memcpy: mean 1 fewer; memset: 3.5 fewer), e.g. 98
 * cycles for a 64-byte word-aligned memcpy against the ROM's 95, 7182 for
 * 1024 bytes not co-aligned against 7183. picoboard's memops_test.go
 * checks every path in rp2040js against C's semantics and against the
 * cycles that table gives it (memcpyCycles, memsetCycles).
 *
 * Where it runs. The ROM is single-cycle with a dedicated AHB-Lite
 * arbiter (RP2040 datasheet 2.6.1, "ROM"), as each SRAM bank is (2.6.2,
 * "SRAM"), so the routines' bodies run from SRAM at the ROM's cost: in
 * .time_critical, which link.ld keeps in SRAM and link-flash.ld copies
 * there with .data (as pico-sdk's memmap_default.ld does with its
 * .time_critical sections). The eight entry points, like pico-sdk's
 * wrappers (PICO_MEM_IN_RAM 0, the default), are ordinary .text, read
 * through the XIP cache in a flash image, and take the body's address
 * from a table in RAM: LDR, LDR, BX, 6 cycles by the Cortex-M0+ TRM's
 * table 3-1, before the body. The caller's BL is not counted anywhere
 * below.
 */
    .syntax unified
    .cpu cortex-m0plus
    .thumb

@ ---- the table the entry points read (in RAM, as aeabi_mem_funcs is) ----

    .section .data.memops_table, "aw", %progbits
    .balign 4
memops_table:
    .word   memops_memset       @ +0
    .word   memops_memcpy       @ +4
    .word   memops_memset4      @ +8
    .word   memops_memcpy4      @ +12
    .size memops_table, . - memops_table

@ ---- entry points (.text, as pico-sdk's wrappers) ----

@ dispatch loads the routine at offset off of the table and jumps to it.
.macro dispatch off
    ldr     r3, =memops_table   @ 2
    ldr     r3, [r3, #\off]     @ 2
    bx      r3                  @ 2
.endm

@ swap12 exchanges r1 and r2: __aeabi_memset's (dest, n, c) is memset's
@ (dest, c, n) with the last two swapped.
.macro swap12
    movs    r3, r1
    movs    r1, r2
    movs    r2, r3
.endm

    .section .text.memops_entry, "ax", %progbits
    .global memcpy
    .type memcpy, %function
    .global __aeabi_memcpy
    .type __aeabi_memcpy, %function
    .thumb_func
memcpy:
    .thumb_func
__aeabi_memcpy:
    dispatch 4
    .ltorg

    .global __aeabi_memcpy4
    .type __aeabi_memcpy4, %function
    .global __aeabi_memcpy8
    .type __aeabi_memcpy8, %function
    .thumb_func
__aeabi_memcpy4:
    .thumb_func
__aeabi_memcpy8:
    dispatch 12
    .ltorg

    .global memset
    .type memset, %function
    .thumb_func
memset:
    dispatch 0
    .ltorg

    .global __aeabi_memset
    .type __aeabi_memset, %function
    .thumb_func
__aeabi_memset:
    swap12
    dispatch 0
    .ltorg

    .global __aeabi_memset4
    .type __aeabi_memset4, %function
    .global __aeabi_memset8
    .type __aeabi_memset8, %function
    .thumb_func
__aeabi_memset4:
    .thumb_func
__aeabi_memset8:
    swap12
    dispatch 8
    .ltorg

@ ---- the bodies (.time_critical: SRAM, as the ROM is single-cycle) ----

    .section .time_critical.memops, "ax", %progbits

@ memops_memcpy: r0 = d, r1 = s, r2 = n; returns d in r0. r12 keeps d on
@ the paths that move r0.
    .type memops_memcpy, %function
    .thumb_func
memops_memcpy:
    cmp     r2, #8
    bhs     .Lc_long
@ n < 8: skip the first 7 - n pairs of the run below. ADD PC reads PC as
@ its own address + 4; the halfword between is never executed.
.Lc_short:
    movs    r3, #7
    subs    r3, r3, r2
    lsls    r3, r3, #2          @ a pair is 4 bytes of code
    add     pc, r3
    nop
    ldrb    r3, [r1, #6]
    strb    r3, [r0, #6]
    ldrb    r3, [r1, #5]
    strb    r3, [r0, #5]
    ldrb    r3, [r1, #4]
    strb    r3, [r0, #4]
    ldrb    r3, [r1, #3]
    strb    r3, [r0, #3]
    ldrb    r3, [r1, #2]
    strb    r3, [r0, #2]
    ldrb    r3, [r1, #1]
    strb    r3, [r0, #1]
    ldrb    r3, [r1, #0]
    strb    r3, [r0, #0]
    bx      lr

.Lc_long:
    subs    r3, r0, r1
    lsls    r3, r3, #30         @ Z iff d - s is a multiple of 4
    bne     .Lc_bytes
    mov     ip, r0
    push    {r4, r5, r6}
    subs    r1, r1, r0          @ r1 = s - d: [r0, r1] addresses s
    movs    r5, r0
    lsls    r3, r0, #31         @ Z iff d is even
    beq     1f
    ldrb    r4, [r0, r1]
    strb    r4, [r0]
    adds    r0, #1
1:  lsls    r3, r0, #30         @ N = bit 1 of d
    bpl     2f
    ldrh    r4, [r0, r1]
    strh    r4, [r0]
    adds    r0, #2
2:  adds    r1, r1, r0          @ s, word aligned now
    subs    r5, r0, r5          @ bytes copied to align (0-3)
    subs    r2, r2, r5
@ r0, r1 word aligned, r2 bytes to copy, r4-r6 saved, d in r12.
.Lc_words:
    subs    r2, #16
    bcc     4f
3:  ldmia   r1!, {r3, r4, r5, r6}
    stmia   r0!, {r3, r4, r5, r6}
    subs    r2, #16
    bcs     3b
@ The low four bits of r2 are the bytes left.
4:  lsls    r2, r2, #29         @ C = the 8s bit, N = the 4s bit
    bcc     5f
    ldmia   r1!, {r3, r4}
    stmia   r0!, {r3, r4}
5:  bpl     6f
    ldmia   r1!, {r3}
    stmia   r0!, {r3}
6:  lsls    r2, r2, #2          @ C = the 2s bit, N = the 1s bit
    bcc     7f
    ldrh    r3, [r1]
    strh    r3, [r0]
    bpl     8f
    ldrb    r3, [r1, #2]
    strb    r3, [r0, #2]
    pop     {r4, r5, r6}
    mov     r0, ip
    bx      lr
7:  bpl     8f
    ldrb    r3, [r1]
    strb    r3, [r0]
8:  pop     {r4, r5, r6}
    mov     r0, ip
    bx      lr

@ Not co-aligned: byte by byte from the end (n >= 8, so r2 > 0); r0 stays d.
.Lc_bytes:
    subs    r2, #1
    ldrb    r3, [r1, r2]
    strb    r3, [r0, r2]
    bne     .Lc_bytes
    bx      lr
    .size memops_memcpy, . - memops_memcpy

@ memops_memcpy4: memops_memcpy for word-aligned d and s.
    .type memops_memcpy4, %function
    .thumb_func
memops_memcpy4:
    cmp     r2, #8
    blo     .Lc_short
    mov     ip, r0
    push    {r4, r5, r6}
    b       .Lc_words
    .size memops_memcpy4, . - memops_memcpy4

@ memops_memset: r0 = d, r1 = c, r2 = n; returns d in r0.
    .type memops_memset, %function
    .thumb_func
memops_memset:
    cmp     r2, #8
    bhs     .Ls_long
@ n < 8: skip the first 7 - n stores (2 bytes of code each).
    movs    r3, #7
    subs    r3, r3, r2
    lsls    r3, r3, #1
    add     pc, r3
    nop
    strb    r1, [r0, #6]
    strb    r1, [r0, #5]
    strb    r1, [r0, #4]
    strb    r1, [r0, #3]
    strb    r1, [r0, #2]
    strb    r1, [r0, #1]
    strb    r1, [r0, #0]
    bx      lr

.Ls_long:
    mov     ip, r0
    uxtb    r1, r1
    lsls    r3, r1, #8
    orrs    r1, r3              @ c in both bytes of the low halfword
    lsls    r3, r0, #31         @ Z iff d is even
    beq     1f
    strb    r1, [r0]
    adds    r0, #1
    subs    r2, #1
1:  lsls    r3, r0, #30         @ N = bit 1 of d
    bpl     .Ls_words
    strh    r1, [r0]
    adds    r0, #2
    subs    r2, #2
@ r0 word aligned, r1 = c in its low halfword twice, r2 bytes, d in r12.
.Ls_words:
    lsls    r3, r1, #16
    orrs    r1, r3              @ c in all four bytes
    movs    r3, r1
    subs    r2, #16
    bcc     4f
    push    {r4, r5}
    movs    r4, r1
    movs    r5, r1
3:  stmia   r0!, {r1, r3, r4, r5}
    subs    r2, #16
    bcs     3b
    pop     {r4, r5}
@ The low four bits of r2 are the bytes left.
4:  lsls    r2, r2, #29         @ C = the 8s bit, N = the 4s bit
    bcc     5f
    stmia   r0!, {r1, r3}
5:  bpl     6f
    stmia   r0!, {r1}
6:  lsls    r2, r2, #2          @ C = the 2s bit, N = the 1s bit
    bcc     7f
    strh    r1, [r0]
    bpl     8f
    strb    r1, [r0, #2]
    mov     r0, ip
    bx      lr
7:  bpl     8f
    strb    r1, [r0]
8:  mov     r0, ip
    bx      lr
    .size memops_memset, . - memops_memset

@ memops_memset4: memops_memset for a word-aligned d.
    .type memops_memset4, %function
    .thumb_func
memops_memset4:
    mov     ip, r0
    uxtb    r1, r1
    lsls    r3, r1, #8
    orrs    r1, r3
    b       .Ls_words
    .size memops_memset4, . - memops_memset4
