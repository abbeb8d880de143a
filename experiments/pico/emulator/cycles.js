#!/usr/bin/env node
// cycles.js: the instrument check of Study C's emulator. It places short
// Thumb instruction sequences in SRAM, executes each instruction once in
// rp2040js's Cortex-M0+ core, and compares the cycles the emulator counts
// with the Cortex-M0+ timings (ARM Cortex-M0+ Technical Reference Manual,
// r0p1, section 3.3 "Instruction set summary", table 3-1), on the RP2040's
// configuration: the single-cycle multiplier and SRAM without wait states
// (RP2040 datasheet, 2.2 "Bus fabric" and 2.6 "Memory"). XIP flash and its
// cache are not modelled by rp2040js and not checked here: our images run
// from SRAM.
//
// The emulator is checked as run.js runs it: with m0plus-timing.js, our
// layer that adds the cycles rp2040js leaves out (LR in PUSH, PC in POP,
// exception entry). --raw checks rp2040js alone; every row also shows
// rp2040js's own count, so the difference stays documented.
//
// Usage: node cycles.js [--modules DIR] [--raw]
// It prints one JSON line: the rows (instruction, TRM row, TRM cycles,
// rp2040js cycles, emulator cycles), mismatches (rows whose emulator
// count differs), raw_mismatches (rows whose rp2040js count differs) and
// the cases the TRM gives no figure for. Exit status 0 when the check ran
// (whatever it found), 1 when it could not run.
'use strict';

const path = require('path');

// Each case: the name, the row of table 3-1 it checks (trm), the TRM's
// cycle count on the RP2040's configuration, the halfwords of the one
// instruction executed, and the registers, flags and memory words to set
// first. Addresses point into SRAM; r1 = DATA and r2 = 4 unless a case sets
// them. The rows cover every instruction class of the Thumb-1 set (ARMv6-M)
// that compiled code uses, in the table's order.
const SRAM = 0x20000000;
const DATA = SRAM + 0x1000;
const CODE = SRAM + 0x100;
const TARGET = SRAM + 0x201; // a branch target (Thumb bit set)
const SIO = 0xd0000000; // the RP2040's single-cycle IO port (datasheet 2.3.1)
const base = { 1: DATA, 2: 4 };
const cases = [
  { trm: 'Move 8-bit immediate', name: 'MOVS Rd, #imm8', cycles: 1, code: [0x2005] },
  { trm: 'Move Lo to Lo', name: 'MOVS Rd, Rm', cycles: 1, code: [0x0008] },
  { trm: 'Move Any to Any', name: 'MOV r8, Rm (high register)', cycles: 1, code: [0x4688] },
  { trm: 'Move Any to PC', name: 'MOV PC, Rm', cycles: 2, code: [0x4687], regs: { 0: TARGET } },
  { trm: 'Add 3-bit immediate', name: 'ADDS Rd, Rn, #imm3', cycles: 1, code: [0x1c48] },
  { trm: 'Add All registers Lo', name: 'ADDS Rd, Rn, Rm', cycles: 1, code: [0x1888] },
  { trm: 'Add Any to Any', name: 'ADD r8, Rm (high register)', cycles: 1, code: [0x4488] },
  { trm: 'Add Any to PC', name: 'ADD PC, Rm', cycles: 2, code: [0x4487], regs: { 0: 0x100 } },
  { trm: 'Add 8-bit immediate', name: 'ADDS Rdn, #imm8', cycles: 1, code: [0x3001] },
  { trm: 'Add With carry', name: 'ADCS Rdn, Rm', cycles: 1, code: [0x4148] },
  { trm: 'Add Immediate to SP', name: 'ADD SP, SP, #imm', cycles: 1, code: [0xb002] },
  { trm: 'Add Form address from SP', name: 'ADD Rd, SP, #imm', cycles: 1, code: [0xa802] },
  { trm: 'Add Form address from PC', name: 'ADR Rd, label', cycles: 1, code: [0xa002] },
  { trm: 'Subtract Lo and Lo', name: 'SUBS Rd, Rn, Rm', cycles: 1, code: [0x1a88] },
  { trm: 'Subtract 3-bit immediate', name: 'SUBS Rd, Rn, #imm3', cycles: 1, code: [0x1e48] },
  { trm: 'Subtract 8-bit immediate', name: 'SUBS Rdn, #imm8', cycles: 1, code: [0x3801] },
  { trm: 'Subtract With carry', name: 'SBCS Rdn, Rm', cycles: 1, code: [0x4188] },
  { trm: 'Subtract Immediate from SP', name: 'SUB SP, SP, #imm', cycles: 1, code: [0xb082] },
  { trm: 'Subtract Negate', name: 'RSBS Rd, Rn, #0', cycles: 1, code: [0x4248] },
  { trm: 'Multiply (single-cycle multiplier)', name: 'MULS Rd, Rm, Rd', cycles: 1, code: [0x4348] },
  { trm: 'Compare', name: 'CMP Rn, Rm', cycles: 1, code: [0x4288] },
  { trm: 'Compare', name: 'CMP r8, Rm (high register)', cycles: 1, code: [0x4588] },
  { trm: 'Compare Negative', name: 'CMN Rn, Rm', cycles: 1, code: [0x42c8] },
  { trm: 'Compare Immediate', name: 'CMP Rn, #imm8', cycles: 1, code: [0x2801] },
  { trm: 'Logical AND', name: 'ANDS Rdn, Rm', cycles: 1, code: [0x4008] },
  { trm: 'Logical Exclusive OR', name: 'EORS Rdn, Rm', cycles: 1, code: [0x4048] },
  { trm: 'Logical OR', name: 'ORRS Rdn, Rm', cycles: 1, code: [0x4308] },
  { trm: 'Logical Bit clear', name: 'BICS Rdn, Rm', cycles: 1, code: [0x4388] },
  { trm: 'Logical Move NOT', name: 'MVNS Rd, Rm', cycles: 1, code: [0x43c8] },
  { trm: 'Logical AND test', name: 'TST Rn, Rm', cycles: 1, code: [0x4208] },
  { trm: 'Shift Logical shift left by immediate', name: 'LSLS Rd, Rm, #imm5', cycles: 1, code: [0x0088] },
  { trm: 'Shift Logical shift left by register', name: 'LSLS Rdn, Rm', cycles: 1, code: [0x4088] },
  { trm: 'Shift Logical shift right by immediate', name: 'LSRS Rd, Rm, #imm5', cycles: 1, code: [0x0888] },
  { trm: 'Shift Logical shift right by register', name: 'LSRS Rdn, Rm', cycles: 1, code: [0x40c8] },
  { trm: 'Shift Arithmetic shift right', name: 'ASRS Rd, Rm, #imm5', cycles: 1, code: [0x1088] },
  { trm: 'Shift Arithmetic shift right by register', name: 'ASRS Rdn, Rm', cycles: 1, code: [0x4108] },
  { trm: 'Rotate Rotate right by register', name: 'RORS Rdn, Rm', cycles: 1, code: [0x41c8] },
  { trm: 'Load Word, immediate offset', name: 'LDR Rt, [Rn, #imm] (SRAM)', cycles: 2, code: [0x6808] },
  { trm: 'Load Halfword, immediate offset', name: 'LDRH Rt, [Rn, #imm] (SRAM)', cycles: 2, code: [0x8808] },
  { trm: 'Load Byte, immediate offset', name: 'LDRB Rt, [Rn, #imm] (SRAM)', cycles: 2, code: [0x7808] },
  { trm: 'Load Word, register offset', name: 'LDR Rt, [Rn, Rm] (SRAM)', cycles: 2, code: [0x5888] },
  { trm: 'Load Halfword, register offset', name: 'LDRH Rt, [Rn, Rm] (SRAM)', cycles: 2, code: [0x5a88] },
  { trm: 'Load Signed halfword, register offset', name: 'LDRSH Rt, [Rn, Rm] (SRAM)', cycles: 2, code: [0x5e88] },
  { trm: 'Load Byte, register offset', name: 'LDRB Rt, [Rn, Rm] (SRAM)', cycles: 2, code: [0x5c88] },
  { trm: 'Load Signed byte, register offset', name: 'LDRSB Rt, [Rn, Rm] (SRAM)', cycles: 2, code: [0x5688] },
  { trm: 'Load PC-relative', name: 'LDR Rt, [PC, #imm] (literal)', cycles: 2, code: [0x4801] },
  { trm: 'Load SP-relative', name: 'LDR Rt, [SP, #imm]', cycles: 2, code: [0x9801], regs: { 13: DATA } },
  { trm: 'Load Multiple, excluding base', name: 'LDMIA Rn!, {r2-r5} (1 + N)', cycles: 5, code: [0xc83c], regs: { 0: DATA } },
  { trm: 'Load Multiple, excluding base', name: 'LDMIA Rn!, {r1} (1 + N)', cycles: 2, code: [0xc802], regs: { 0: DATA } },
  { trm: 'Load Multiple, including base', name: 'LDMIA Rn, {r0-r3} (1 + N)', cycles: 5, code: [0xc80f], regs: { 0: DATA } },
  { trm: 'Load Word, immediate offset (single-cycle I/O port: 1)', name: 'LDR Rt, [Rn, #imm] (SIO)', cycles: 1, code: [0x6808], regs: { 1: SIO } },
  { trm: 'Store Word, immediate offset', name: 'STR Rt, [Rn, #imm] (SRAM)', cycles: 2, code: [0x6008] },
  { trm: 'Store Halfword, immediate offset', name: 'STRH Rt, [Rn, #imm] (SRAM)', cycles: 2, code: [0x8008] },
  { trm: 'Store Byte, immediate offset', name: 'STRB Rt, [Rn, #imm] (SRAM)', cycles: 2, code: [0x7008] },
  { trm: 'Store Word, register offset', name: 'STR Rt, [Rn, Rm] (SRAM)', cycles: 2, code: [0x5088] },
  { trm: 'Store Halfword, register offset', name: 'STRH Rt, [Rn, Rm] (SRAM)', cycles: 2, code: [0x5288] },
  { trm: 'Store Byte, register offset', name: 'STRB Rt, [Rn, Rm] (SRAM)', cycles: 2, code: [0x5488] },
  { trm: 'Store SP-relative', name: 'STR Rt, [SP, #imm]', cycles: 2, code: [0x9001], regs: { 13: DATA } },
  { trm: 'Store Multiple', name: 'STMIA Rn!, {r2-r5} (1 + N)', cycles: 5, code: [0xc03c], regs: { 0: DATA } },
  { trm: 'Push up to 7 low registers', name: 'PUSH {r4-r7} (1 + N)', cycles: 5, code: [0xb4f0], regs: { 13: DATA + 0x100 } },
  { trm: 'Push link register and up to 7 low registers', name: 'PUSH {lr} (1 + N, N counts LR)', cycles: 2, code: [0xb500], regs: { 13: DATA + 0x100 } },
  { trm: 'Push link register and up to 7 low registers', name: 'PUSH {r4-r7, lr} (1 + N, N counts LR)', cycles: 6, code: [0xb5f0], regs: { 13: DATA + 0x100 } },
  { trm: 'Pop up to 7 low registers', name: 'POP {r4-r7} (1 + N)', cycles: 5, code: [0xbcf0], regs: { 13: DATA } },
  { trm: 'Pop PC and up to 7 low registers', name: 'POP {pc} (3 + N, N counts PC)', cycles: 4, code: [0xbd00], regs: { 13: DATA }, mem: { [DATA]: TARGET } },
  { trm: 'Pop PC and up to 7 low registers', name: 'POP {r4, pc} (3 + N, N counts PC)', cycles: 5, code: [0xbd10], regs: { 13: DATA }, mem: { [DATA + 4]: TARGET } },
  { trm: 'Pop PC and up to 7 low registers', name: 'POP {r4-r7, pc} (3 + N, N counts PC)', cycles: 8, code: [0xbdf0], regs: { 13: DATA }, mem: { [DATA + 16]: TARGET } },
  { trm: 'Branch Conditional (not taken)', name: 'BEQ label (not taken)', cycles: 1, code: [0xd000], flags: { Z: false } },
  { trm: 'Branch Conditional (taken)', name: 'BEQ label (taken)', cycles: 2, code: [0xd000], flags: { Z: true } },
  { trm: 'Branch Conditional (taken)', name: 'BCS label (taken, backwards)', cycles: 2, code: [0xd2fe], flags: { C: true } },
  { trm: 'Branch Unconditional', name: 'B label', cycles: 2, code: [0xe000] },
  { trm: 'Branch With link', name: 'BL label', cycles: 3, code: [0xf000, 0xf800] },
  { trm: 'Branch With exchange', name: 'BX Rm', cycles: 2, code: [0x4700], regs: { 0: TARGET } },
  { trm: 'Branch With link and exchange', name: 'BLX Rm', cycles: 2, code: [0x4780], regs: { 0: TARGET } },
  { trm: 'Extend Signed halfword to word', name: 'SXTH Rd, Rm', cycles: 1, code: [0xb208] },
  { trm: 'Extend Signed byte to word', name: 'SXTB Rd, Rm', cycles: 1, code: [0xb248] },
  { trm: 'Extend Unsigned halfword', name: 'UXTH Rd, Rm', cycles: 1, code: [0xb288] },
  { trm: 'Extend Unsigned byte', name: 'UXTB Rd, Rm', cycles: 1, code: [0xb2c8] },
  { trm: 'Reverse Bytes in word', name: 'REV Rd, Rm', cycles: 1, code: [0xba08] },
  { trm: 'Reverse Bytes in both halfwords', name: 'REV16 Rd, Rm', cycles: 1, code: [0xba48] },
  { trm: 'Reverse Signed bottom half word', name: 'REVSH Rd, Rm', cycles: 1, code: [0xbac8] },
  { trm: 'State change Disable interrupts', name: 'CPSID i', cycles: 1, code: [0xb672] },
  { trm: 'State change Enable interrupts', name: 'CPSIE i', cycles: 1, code: [0xb662] },
  { trm: 'State change Read special register', name: 'MRS Rd, PRIMASK', cycles: 3, code: [0xf3ef, 0x8010] },
  { trm: 'State change Write special register', name: 'MSR PRIMASK, Rn', cycles: 3, code: [0xf380, 0x8810], regs: { 0: 0 } },
  { trm: 'Barriers Data memory', name: 'DMB SY', cycles: 3, code: [0xf3bf, 0x8f5f] },
  { trm: 'Barriers Data synchronization', name: 'DSB SY', cycles: 3, code: [0xf3bf, 0x8f4f] },
  { trm: 'Barriers Instruction synchronization', name: 'ISB SY', cycles: 3, code: [0xf3bf, 0x8f6f] },
  { trm: 'Hint Send event', name: 'SEV', cycles: 1, code: [0xbf40] },
  { trm: 'Hint Wait for interrupt', name: 'WFI', cycles: 2, code: [0xbf30] },
  { trm: 'Hint No operation', name: 'NOP', cycles: 1, code: [0xbf00] },
  // Section 3.6.1: 15 cycles from the request to the handler's first
  // instruction; the call also executes that instruction (a NOP, 1).
  { trm: 'Section 3.6.1 Exception handling: interrupt latency 15', name: 'exception entry (PendSV) + NOP in the handler', cycles: 16, code: [0xbf00], pendSV: true },
];

// unchecked lists what the TRM gives no figure for, so no row can check.
const unchecked = [
  { instruction: 'exception return (BX LR or POP {pc} with EXC_RETURN)', reason: 'the TRM gives no cycle count for exception return; it costs the BX or POP that starts it' },
];

// VECTORS is where the exception-entry case places its vector table.
const VECTORS = SRAM + 0x400;
const HANDLER = SRAM + 0x300;

// runCase executes one case's instruction once on a fresh RP2040 and
// returns the cycles counted, with the timing layer when timed is set.
function runCase(RP2040, timing, c, timed) {
  const mcu = new RP2040();
  const fail = (t, m) => { throw new Error(`${c.name}: [${t}] ${m}`); };
  mcu.logger = { debug() {}, info() {}, warn: fail, error: fail };
  const core = mcu.core;
  if (timed) timing.patch(core);
  let pc = CODE;
  if (c.pendSV) {
    pc = HANDLER;
    core.VTOR = VECTORS;
    mcu.writeUint32(VECTORS + 4 * 14, (HANDLER | 1) >>> 0);
  }
  c.code.forEach((h, i) => mcu.writeUint16(pc + 2 * i, h));
  core.PC = c.pendSV ? CODE : pc;
  if (c.pendSV) mcu.writeUint16(CODE, 0xbf00);
  core.SP = SRAM + 0x8000;
  for (const [r, v] of Object.entries({ ...base, ...(c.regs || {}) })) core.registers[Number(r)] = v >>> 0;
  for (const [f, v] of Object.entries(c.flags || {})) core[f] = v;
  for (const [a, v] of Object.entries(c.mem || {})) mcu.writeUint32(Number(a), v >>> 0);
  if (c.pendSV) {
    core.pendingPendSV = true;
    core.interruptsUpdated = true;
  }
  const before = core.cycles;
  const ret = core.executeInstruction();
  const got = core.cycles - before;
  if (ret !== got) throw new Error(`${c.name}: executeInstruction returned ${ret}, core.cycles moved ${got}`);
  if (c.pendSV && core.IPSR !== 14) throw new Error(`${c.name}: PendSV not taken (IPSR ${core.IPSR})`);
  return got;
}

function main() {
  let modules = path.join(__dirname, 'node_modules');
  let raw = false;
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--modules' && i + 1 < argv.length) modules = argv[++i];
    else if (argv[i] === '--raw') raw = true;
    else throw new Error(`unknown argument ${argv[i]}`);
  }
  const { RP2040 } = require(path.resolve(modules, 'rp2040js'));
  const timing = require('./m0plus-timing.js');
  const rows = [];
  let mismatches = 0, rawMismatches = 0;
  for (const c of cases) {
    const plain = runCase(RP2040, timing, c, false);
    const got = raw ? plain : runCase(RP2040, timing, c, true);
    if (got !== c.cycles) mismatches++;
    if (plain !== c.cycles) rawMismatches++;
    rows.push({ instruction: c.name, trm_row: c.trm, trm_cycles: c.cycles, rp2040js_cycles: plain, emulator_cycles: got });
  }
  process.stdout.write(JSON.stringify({
    rp2040js: require(path.resolve(modules, 'rp2040js/package.json')).version,
    timing: raw ? 'none (--raw)' : 'm0plus-timing.js',
    rows, mismatches, raw_mismatches: rawMismatches, unchecked,
  }) + '\n');
}

try {
  main();
} catch (e) {
  process.stderr.write(`cycles.js: ${e.message}\n`);
  process.exit(1);
}
