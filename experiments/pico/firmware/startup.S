/*
 * startup.S: entry point of a RAM-only image.
 *
 * The RP2040 bootrom enters a RAM-only UF2 at the lowest address it loaded
 * (RP2040 datasheet 2.8.4.2; the pico-sdk no-flash linker script puts its
 * entry first for the same reason), with whatever stack pointer the bootrom
 * had. So the image starts with this stub, not with the vector table: it
 * points VTOR at the table (which must be 256-byte aligned) and then takes
 * SP and PC from it exactly as a core reset would. The rp2040js runner
 * enters here too, so both boards start the same way.
 */
	.syntax unified
	.cpu cortex-m0plus
	.thumb

	.section .entry, "ax"
	.global _entry
	.type _entry, %function
	.thumb_func
_entry:
	ldr r0, =__vectors
	ldr r1, =0xe000ed08
	str r0, [r1]
	ldmia r0!, {r1, r2}
	msr msp, r1
	bx r2
	.ltorg
	.size _entry, . - _entry
