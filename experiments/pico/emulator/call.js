#!/usr/bin/env node
// call.js: call a position-independent Thumb routine in rp2040js, under
// the same Cortex-M0+ timing layer as run.js (m0plus-timing.js), once per
// input line, so a test can check a firmware routine as the board runs it
// (experiments/pico/picoboard runtime_test.go checks our __aeabi_lmul,
// div_test.go our division, memops_test.go our memcpy and memset).
//
// Usage: node call.js --bin FILE [--entry OFFSET] [--modules DIR]
// FILE holds the routine's raw code, entered at byte OFFSET (hex, default
// 0). Each input line is r0 r1 r2 r3 in hex; each output line is r0 r1
// (hex) and the cycles from the routine's first instruction to its return
// (decimal), summed from what each instruction returns, as run.js sums
// them: rp2040js also adds 8 to core.cycles on every write to the SIO
// divider's operands, which neither run.js nor the firmware's SysTick
// sees (the program waits the divider's 8 cycles itself).
// Two more lines give a routine memory to work on, in SRAM from
// 0x20010000 (below it are the code and the stack): "w ADDR HEX" writes
// the bytes HEX at ADDR (hex) and prints "ok"; "r ADDR LEN" prints the
// LEN (hex) bytes at ADDR in hex.
// The call fails (exit status 1, a message on stderr) when the routine
// does not return within 1,000,000 instructions or changes a register the
// AAPCS says it must preserve (r4-r11, SP).
'use strict';

const fs = require('fs');
const path = require('path');
const readline = require('readline');

const SRAM = 0x20000000;
const CODE = SRAM + 0x100;
const RET = SRAM + 0x80; // the return address: never executed
const STACK = SRAM + 0x8000;
const DATA = SRAM + 0x10000; // the memory "w" and "r" lines may touch
const SRAM_END = SRAM + 264 * 1024;

function main() {
  let modules = path.join(__dirname, 'node_modules');
  let bin = '';
  let entry = 0;
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--modules' && i + 1 < argv.length) modules = argv[++i];
    else if (argv[i] === '--bin' && i + 1 < argv.length) bin = argv[++i];
    else if (argv[i] === '--entry' && i + 1 < argv.length) entry = parseInt(argv[++i], 16);
    else throw new Error(`unknown argument ${argv[i]}`);
  }
  if (!bin) throw new Error('--bin FILE is required');
  if (!(entry >= 0) || entry % 2) throw new Error('--entry must be an even hex offset');
  const { RP2040 } = require(path.resolve(modules, 'rp2040js'));
  const mcu = new RP2040();
  const fail = (t, m) => { throw new Error(`[${t}] ${m}`); };
  mcu.logger = { debug() {}, info() {}, warn: fail, error: fail };
  const core = mcu.core;
  require('./m0plus-timing.js').patch(core);
  const code = fs.readFileSync(bin);
  mcu.sram.set(code, CODE - SRAM);

  const rl = readline.createInterface({ input: process.stdin });
  rl.on('line', (line) => {
    try {
      if (/^[wr] /.test(line)) memory(mcu, line);
      else call(core, line, CODE + entry);
    } catch (e) {
      process.stderr.write(`call.js: ${e.message}\n`);
      process.exit(1);
    }
  });
}

// memory runs one "w ADDR HEX" or "r ADDR LEN" line.
function memory(mcu, line) {
  const [op, a, b] = line.trim().split(/\s+/);
  const addr = parseInt(a, 16);
  const bytes = op === 'w' ? Buffer.from(b || '', 'hex') : null;
  const len = op === 'w' ? bytes.length : parseInt(b, 16);
  if (!/^[0-9a-fA-F]{1,8}$/.test(a) || !(len >= 0) || (op === 'w' && (b || '').length !== 2 * len)) {
    throw new Error(`bad memory line ${JSON.stringify(line)}`);
  }
  if (addr < DATA || addr + len > SRAM_END) throw new Error(`${op} 0x${addr.toString(16)}+${len} is outside 0x${DATA.toString(16)}..0x${SRAM_END.toString(16)}`);
  if (op === 'w') {
    mcu.sram.set(bytes, addr - SRAM);
    process.stdout.write('ok\n');
    return;
  }
  process.stdout.write(Buffer.from(mcu.sram.subarray(addr - SRAM, addr - SRAM + len)).toString('hex') + '\n');
}

// call runs the routine once with the registers of one input line and
// writes its output line.
function call(core, line, pc) {
  if (!line.trim()) return;
  const words = line.trim().split(/\s+/);
  if (words.length !== 4 || words.some((h) => !/^[0-9a-fA-F]{1,8}$/.test(h))) {
    throw new Error(`bad input line ${JSON.stringify(line)}: want r0 r1 r2 r3 in hex`);
  }
  words.forEach((h, r) => { core.registers[r] = parseInt(h, 16) >>> 0; });
  for (let r = 4; r <= 11; r++) core.registers[r] = (0xa5a50000 | r) >>> 0;
  core.SP = STACK;
  core.LR = (RET | 1) >>> 0;
  core.PC = pc;
  let cycles = 0;
  for (let n = 0; (core.PC >>> 0) !== RET; n++) {
    if (n >= 1000000) throw new Error(`no return after 1000000 instructions (pc 0x${(core.PC >>> 0).toString(16)})`);
    cycles += core.executeInstruction();
  }
  for (let r = 4; r <= 11; r++) {
    if (core.registers[r] !== ((0xa5a50000 | r) >>> 0)) throw new Error(`r${r} not preserved`);
  }
  if ((core.SP >>> 0) !== STACK) throw new Error('SP not preserved');
  const hex = (r) => (core.registers[r] >>> 0).toString(16);
  process.stdout.write(`${hex(0)} ${hex(1)} ${cycles}\n`);
}

try {
  main();
} catch (e) {
  process.stderr.write(`call.js: ${e.message}\n`);
  process.exit(1);
}
