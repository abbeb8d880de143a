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
// Usage: node cycles.js [--modules DIR]
// It prints one JSON line: the rows (instruction, TRM cycles, emulator
// cycles) and mismatches, the number of rows whose counts differ. Exit
// status 0 when the check ran (whatever it found), 1 when it could not run.
'use strict';

const path = require('path');

// Each case: the name, the TRM's cycle count on the RP2040's configuration,
// the halfwords to execute (the counted instruction last) and registers
// to set first. Addresses point into SRAM.
const SRAM = 0x20000000;
const DATA = SRAM + 0x1000;
const cases = [
  { name: 'MOVS Rd, #imm8', trm: 1, code: [0x2005] },
  { name: 'ADDS Rd, Rn, Rm', trm: 1, code: [0x1888] },
  { name: 'MULS Rd, Rm, Rd (single-cycle multiplier)', trm: 1, code: [0x4348] },
  { name: 'LSLS Rd, Rm, #imm5', trm: 1, code: [0x0088] },
  { name: 'EORS Rdn, Rm', trm: 1, code: [0x4048] },
  { name: 'LDR Rt, [Rn, #imm] (SRAM)', trm: 2, code: [0x6808], regs: { 1: DATA } },
  { name: 'STR Rt, [Rn, #imm] (SRAM)', trm: 2, code: [0x6008], regs: { 1: DATA } },
  { name: 'LDRB Rt, [Rn, #imm] (SRAM)', trm: 2, code: [0x7808], regs: { 1: DATA } },
  { name: 'PUSH {r4-r7} (1 + N)', trm: 5, code: [0xb4f0], regs: { 13: DATA + 0x100 } },
  { name: 'POP {r4-r7} (1 + N)', trm: 5, code: [0xbcf0], regs: { 13: DATA } },
  { name: 'POP {r4, pc} (3 + N)', trm: 4, code: [0xbd10], regs: { 13: DATA }, mem: { [DATA + 4]: SRAM + 0x201 } },
  { name: 'LDMIA Rn!, {r2-r5} (1 + N)', trm: 5, code: [0xc83c], regs: { 0: DATA } },
  { name: 'STMIA Rn!, {r2-r5} (1 + N)', trm: 5, code: [0xc03c], regs: { 0: DATA } },
  { name: 'B label (taken)', trm: 2, code: [0xe000] },
  { name: 'BEQ label (not taken)', trm: 1, code: [0xd000], flags: { Z: false } },
  { name: 'BEQ label (taken)', trm: 2, code: [0xd000], flags: { Z: true } },
  { name: 'BL label', trm: 3, code: [0xf000, 0xf800] },
  { name: 'BX Rm', trm: 2, code: [0x4700], regs: { 0: SRAM + 0x201 } },
  { name: 'NOP', trm: 1, code: [0xbf00] },
];

function main() {
  let modules = path.join(__dirname, 'node_modules');
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--modules' && i + 1 < argv.length) modules = argv[++i];
    else throw new Error(`unknown argument ${argv[i]}`);
  }
  const { RP2040 } = require(path.resolve(modules, 'rp2040js'));
  const rows = [];
  let mismatches = 0;
  for (const c of cases) {
    const mcu = new RP2040();
    mcu.logger = { debug() {}, info() {}, warn() {}, error(t, m) { throw new Error(`[${t}] ${m}`); } };
    const core = mcu.core;
    const pc = SRAM + 0x100;
    c.code.forEach((h, i) => mcu.writeUint16(pc + 2 * i, h));
    core.PC = pc;
    core.SP = SRAM + 0x8000;
    for (const [r, v] of Object.entries(c.regs || {})) core.registers[Number(r)] = v >>> 0;
    for (const [f, v] of Object.entries(c.flags || {})) core[f] = v;
    for (const [a, v] of Object.entries(c.mem || {})) mcu.writeUint32(Number(a), v >>> 0);
    const before = core.cycles;
    core.executeInstruction();
    const got = core.cycles - before;
    if (got !== c.trm) mismatches++;
    rows.push({ instruction: c.name, trm_cycles: c.trm, emulator_cycles: got });
  }
  process.stdout.write(JSON.stringify({ rp2040js: require(path.resolve(modules, 'rp2040js/package.json')).version, rows, mismatches }) + '\n');
}

try {
  main();
} catch (e) {
  process.stderr.write(`cycles.js: ${e.message}\n`);
  process.exit(1);
}
