#!/usr/bin/env node
// run.js: run an RP2040 UF2 image (RAM-only, or with its code in flash) in
// rp2040js and pass UART0's bytes, unchanged, to a file descriptor (the Go
// side hands over the master of a pseudo-terminal, so its serial reader
// reads the emulator exactly as it reads a board).
//
// The RP2040 bootrom is not part of the npm build, so this runner does what
// the bootrom does with a RAM-only UF2 (RP2040 datasheet 2.8.4.2): it copies
// every block's payload to its target address in SRAM and enters the image
// at the lowest address written, in Thumb state. rp2040js's own
// Simulator.execute() assumes a 125 MHz clock; this loop instead advances
// simulated time by cycles / clk_sys, with clk_sys taken from the clock
// registers the firmware programmed (133 MHz here), so the timer and SysTick
// read what they would on a board. The core runs under m0plus-timing.js,
// our layer that adds the cycles rp2040js leaves out of the Cortex-M0+
// Technical Reference Manual's timings (LR in PUSH, PC in POP, exception
// entry; cycles.js checks every instruction class). Same image, same
// cycles: the run is deterministic.
//
// An image whose code runs from flash (XIP) has UF2 blocks in the flash
// window: they are written into rp2040js's flash array directly, as the
// bootrom's flash programming would leave them. What a real board runs
// first, the bootrom and the second stage bootloader (boot2, which sets up
// the SSI for quad-I/O continuous reads), is skipped: we cannot build
// boot2 without pico-sdk, and rp2040js reads flash without the SSI. The
// image is entered at its lowest address, like a RAM-only one, and
// --xip-cache charges the flash reads as the cache and the SSI that boot2
// configures would (xip-cache.js; off by default). --xip-size, --xip-ways
// and --xip-line change the cache's geometry (the RP2040's by default);
// an impossible geometry is an error before the image is loaded.
//
// Usage: node run.js --uf2 FILE [--uart-fd N] [--modules DIR]
//          [--max-cycles N] [--timeout-ms N] [--stop-at-end]
//          [--xip-cache [--xip-size N] [--xip-ways N] [--xip-line N]]
// On exit it prints one JSON line to stdout: reason ("end", "fault",
// "breakpoint", "max-cycles", "timeout", "deadlock", "error"), pc, cycles,
// simulated seconds, wall seconds, simulated MHz, the timing layer's
// counters (timing), the cache's (xip, with --xip-cache), warnings and
// the last UART lines. Exit status 0 only for reason "end".
'use strict';

const fs = require('fs');
const path = require('path');

function parseArgs(argv) {
  const a = { uartFd: 1, modules: path.join(__dirname, 'node_modules'), maxCycles: 0, timeoutMs: 0, stopAtEnd: false };
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i];
    const v = () => {
      if (i + 1 >= argv.length) throw new Error(`${k} needs a value`);
      return argv[++i];
    };
    switch (k) {
      case '--uf2': a.uf2 = v(); break;
      case '--uart-fd': a.uartFd = Number(v()); break;
      case '--modules': a.modules = v(); break;
      case '--max-cycles': a.maxCycles = Number(v()); break;
      case '--timeout-ms': a.timeoutMs = Number(v()); break;
      case '--stop-at-end': a.stopAtEnd = true; break;
      case '--xip-cache': a.xip = a.xip || {}; break;
      case '--xip-size': a.xipSize = Number(v()); break;
      case '--xip-ways': a.xipWays = Number(v()); break;
      case '--xip-line': a.xipLine = Number(v()); break;
      default: throw new Error(`unknown argument ${k}`);
    }
  }
  if (!a.uf2) throw new Error('--uf2 FILE is required');
  const geo = [a.xipSize, a.xipWays, a.xipLine];
  if (!a.xip && geo.some((x) => x !== undefined)) throw new Error('--xip-size, --xip-ways and --xip-line need --xip-cache');
  if (a.xip) {
    const { RP2040: d, checkGeometry } = require('./xip-cache.js');
    a.xip.geometry = { size: a.xipSize ?? d.size, ways: a.xipWays ?? d.ways, line: a.xipLine ?? d.line };
    checkGeometry(a.xip.geometry);
  }
  return a;
}

// UF2 block layout (github.com/microsoft/uf2 README): 512 bytes, little
// endian: magic0, magic1, flags, target address, payload size, block number,
// block count, family ID (or file size), 476 data bytes, magic end.
const UF2_MAGIC0 = 0x0a324655, UF2_MAGIC1 = 0x9e5d5157, UF2_MAGIC_END = 0x0ab16f30;
const FLAG_NOT_MAIN_FLASH = 0x1, FLAG_FAMILY = 0x2000;
const RP2040_FAMILY = 0xe48bff56;
const SRAM_START = 0x20000000, SRAM_SIZE = 264 * 1024;
// The flash window's cacheable alias; rp2040js holds 16 MB of flash.
const FLASH_START = 0x10000000, FLASH_SIZE = 16 * 1024 * 1024;

function loadUF2(rp2040, buf) {
  if (buf.length === 0 || buf.length % 512 !== 0) {
    throw new Error(`UF2 is ${buf.length} bytes, not a positive multiple of 512`);
  }
  let lowest = Infinity;
  let count = -1;
  for (let off = 0; off < buf.length; off += 512) {
    const b = buf.subarray(off, off + 512);
    const n = off / 512;
    if (b.readUInt32LE(0) !== UF2_MAGIC0 || b.readUInt32LE(4) !== UF2_MAGIC1 || b.readUInt32LE(508) !== UF2_MAGIC_END) {
      throw new Error(`UF2 block ${n}: bad magic`);
    }
    const flags = b.readUInt32LE(8);
    if (flags & FLAG_NOT_MAIN_FLASH) continue;
    if ((flags & FLAG_FAMILY) && b.readUInt32LE(28) !== RP2040_FAMILY) {
      throw new Error(`UF2 block ${n}: family 0x${b.readUInt32LE(28).toString(16)} is not RP2040`);
    }
    const addr = b.readUInt32LE(12), size = b.readUInt32LE(16);
    const blockNo = b.readUInt32LE(20), numBlocks = b.readUInt32LE(24);
    if (size > 476) throw new Error(`UF2 block ${n}: payload ${size} > 476`);
    if (blockNo !== n || (count >= 0 && numBlocks !== count)) {
      throw new Error(`UF2 block ${n}: numbered ${blockNo} of ${numBlocks}`);
    }
    count = numBlocks;
    if (addr >= FLASH_START && addr + size <= FLASH_START + FLASH_SIZE) {
      rp2040.flash.set(b.subarray(32, 32 + size), addr - FLASH_START);
      lowest = Math.min(lowest, addr);
      continue;
    }
    if (addr < SRAM_START || addr + size > SRAM_START + SRAM_SIZE) {
      throw new Error(`UF2 block ${n}: target 0x${addr.toString(16)} is outside SRAM and flash`);
    }
    rp2040.sram.set(b.subarray(32, 32 + size), addr - SRAM_START);
    lowest = Math.min(lowest, addr);
  }
  if (lowest === Infinity) throw new Error('UF2 has no main-flash/RAM blocks');
  if (count !== buf.length / 512) throw new Error(`UF2 says ${count} blocks, file has ${buf.length / 512}`);
  return lowest;
}

function main() {
  const args = parseArgs(process.argv.slice(2));
  const { RP2040 } = require(path.resolve(args.modules, 'rp2040js'));
  const warnings = [];
  let emuError = null;
  const logger = {
    debug() {},
    info() {},
    warn(c, m) { if (warnings.length < 20) warnings.push(`[${c}] ${m}`); },
    error(c, m) { emuError = emuError || `[${c}] ${m}`; throw new Error(`[${c}] ${m}`); },
  };
  const mcu = new RP2040();
  mcu.logger = logger;
  const entry = loadUF2(mcu, fs.readFileSync(args.uf2));
  const core = mcu.core;
  const xip = args.xip ? require('./xip-cache.js').attach(mcu, args.xip) : null;
  const timing = require('./m0plus-timing.js').patch(core, { xip });
  core.SP = SRAM_START + SRAM_SIZE;
  core.PC = entry;

  const lines = [];
  let cur = [];
  let sawEnd = false, sawFault = false;
  let out = [];
  let outLen = 0;
  const flush = () => {
    if (!outLen) return;
    const data = Buffer.from(out);
    out = [];
    outLen = 0;
    let off = 0;
    while (off < data.length) {
      try {
        off += fs.writeSync(args.uartFd, data, off, data.length - off);
      } catch (e) {
        if (e.code !== 'EAGAIN') throw e;
      }
    }
  };
  mcu.uart[0].onByte = (b) => {
    out.push(b);
    outLen++;
    if (b === 0x0a) {
      const line = Buffer.from(cur).toString('latin1');
      cur = [];
      lines.push(line);
      if (lines.length > 20) lines.shift();
      if (/^PQ \d+ end /.test(line)) sawEnd = true;
      if (/^PQ \d+ fault /.test(line)) sawFault = true;
      if (outLen > 4096) flush();
    } else if (cur.length < 4096) {
      cur.push(b);
    }
  };
  let brk = null;
  mcu.onBreak = (code) => { brk = code; };

  const clock = mcu.clock;
  const t0 = process.hrtime.bigint();
  let cyc = 0;
  let reason = null;
  let wallCheck = 0;
  try {
    for (;;) {
      if (core.waiting) {
        const next = clock.nanosToNextAlarm;
        if (!(next > 0) || !isFinite(next)) { reason = 'deadlock'; break; }
        clock.tick(next);
        cyc += Math.round(next * mcu.clkSys / 1e9);
      } else {
        const c = core.executeInstruction();
        cyc += c;
        clock.tick(c * 1e9 / mcu.clkSys);
      }
      if (brk !== null) { reason = sawFault ? 'fault' : 'breakpoint'; break; }
      if (sawEnd && args.stopAtEnd) { reason = 'end'; break; }
      if (args.maxCycles && cyc >= args.maxCycles) { reason = 'max-cycles'; break; }
      if (++wallCheck >= 1000000) {
        wallCheck = 0;
        flush();
        if (args.timeoutMs && Number(process.hrtime.bigint() - t0) / 1e6 > args.timeoutMs) { reason = 'timeout'; break; }
      }
    }
  } catch (e) {
    reason = 'error';
    emuError = emuError || String(e && e.message || e);
  }
  flush();
  const wall = Number(process.hrtime.bigint() - t0) / 1e9;
  if (cur.length) lines.push(Buffer.from(cur).toString('latin1'));
  const status = {
    reason,
    pc: core.PC >>> 0,
    ipsr: core.IPSR,
    breakpoint: brk,
    cycles: cyc,
    simSeconds: clock.nanos / 1e9,
    wallSeconds: wall,
    simMHz: wall > 0 ? cyc / wall / 1e6 : 0,
    clkSys: mcu.clkSys,
    timing,
    xip: xip ? { ...xip.stats, geometry: args.xip.geometry } : undefined,
    error: emuError,
    warnings,
    lastLines: lines.slice(-10),
  };
  process.stdout.write(JSON.stringify(status) + '\n');
  process.exitCode = reason === 'end' ? 0 : 1;
}

try {
  main();
} catch (e) {
  process.stdout.write(JSON.stringify({ reason: 'error', error: String(e && e.message || e) }) + '\n');
  process.exitCode = 2;
}
