#!/usr/bin/env node
// xip-cache-check.js: checks the XIP cache model (xip-cache.js) against hit
// and miss sequences computed by hand from the RP2040's geometry (16 kB,
// two ways, 8-byte lines: 1024 sets, so addresses 8 kB apart share a set),
// its geometry checks, its miss cost, and the model wired into rp2040js
// under the timing layer (a few instructions fetched and a word loaded
// from flash, cold and then warm).
//
// Usage: node xip-cache-check.js [--modules DIR]
// It prints one JSON line: cases (name, ok, detail) and failures (their
// count). Exit status 0 when every case passed.
'use strict';

const path = require('path');
const { XipCache, attach, checkGeometry, missCycles, RP2040, BOOT2 } = require('./xip-cache.js');

const cases = [];
function check(name, fn) {
  try {
    const detail = fn();
    cases.push({ name, ok: true, detail: detail || '' });
  } catch (e) {
    cases.push({ name, ok: false, detail: String(e && e.message || e) });
  }
}

// expectSeq reads each address and compares the hits and misses with want
// ('h' or 'm' per read).
function expectSeq(c, addrs, want) {
  const got = addrs.map((a) => (c.read(a) ? 'h' : 'm')).join('');
  if (got !== want) throw new Error(`reads ${addrs.map((a) => '0x' + a.toString(16)).join(' ')}: got ${got}, want ${want}`);
  return got;
}

const X = 0x10000000;
const SET_STRIDE = 8192; // 1024 sets * 8 bytes: the next line of the same set

check('geometry is the datasheet\'s: 1024 sets of 2 ways of 8 bytes', () => {
  const c = new XipCache();
  if (c.sets !== 1024 || c.ways !== 2 || c.line !== 8 || c.size !== 16384) throw new Error(`sets ${c.sets} ways ${c.ways} line ${c.line} size ${c.size}`);
});
check('same line: one miss, then hits on every byte, halfword and word of it', () => {
  expectSeq(new XipCache(), [X, X + 4, X + 2, X + 7, X + 1], 'mhhhh');
});
check('a sequence crossing lines misses once per line', () => {
  // Halfword fetches 0x...04 to 0x...12: lines 0x00 (04, 06), 0x08 (08-0e), 0x10 (10, 12).
  expectSeq(new XipCache(), [X + 4, X + 6, X + 8, X + 0xa, X + 0xc, X + 0xe, X + 0x10, X + 0x12], 'mhmhhhmh');
});
check('two ways: two lines of one set both stay', () => {
  expectSeq(new XipCache(), [X, X + SET_STRIDE, X, X + SET_STRIDE], 'mmhh');
});
check('eviction order: the least recently used way goes', () => {
  const A = X, B = X + SET_STRIDE, C = X + 2 * SET_STRIDE;
  // A B (fill both ways), A (hit: B is now older), C evicts B, A hits,
  // B misses and evicts C (older than A), C misses and evicts A.
  expectSeq(new XipCache(), [A, B, A, C, A, B, C, A], 'mmhmhmmm');
});
check('eviction order without reuse: first in, first out', () => {
  const A = X, B = X + SET_STRIDE, C = X + 2 * SET_STRIDE;
  expectSeq(new XipCache(), [A, B, C, B, A], 'mmmhm');
});
check('aliasing sets: 16 kB apart share a set, other sets do not disturb it', () => {
  const c = new XipCache();
  // Three lines 16 kB apart all map to set 0; lines of sets 1..1023 in between do not evict.
  expectSeq(c, [X, X + 0x4000, X + 8, X + 0x1ff8, X + 0x2008, X], 'mmmmmh');
  // Set 0 holds X (newer) and X+16k: X+32k evicts X+16k, X stays,
  // X+16k comes back in place of X+32k.
  expectSeq(c, [X + 0x8000, X, X + 0x4000, X], 'mhmh');
});
check('aliases 0x11 (no allocate), 0x12 (no check, allocate), 0x13 (bypass)', () => {
  const c = new XipCache();
  const line = 0x40;
  expectSeq(c, [0x11000000 + line, 0x11000000 + line], 'mm'); // never allocated
  expectSeq(c, [0x10000000 + line, 0x11000000 + line], 'mh'); // checks the same tags
  expectSeq(c, [0x13000000 + line, 0x12000000 + line], 'mm'); // neither checks
  expectSeq(c, [0x12000000 + 0x80, 0x10000000 + 0x80], 'mh'); // 0x12 allocated it
  expectSeq(c, [0x13000000 + 0x100, 0x10000000 + 0x100], 'mm'); // 0x13 did not
});
check('flush empties the cache; a write to 0x10 deletes its line only', () => {
  const c = new XipCache();
  expectSeq(c, [X, X + 8], 'mm');
  c.flush();
  expectSeq(c, [X, X + 8], 'mm');
  c.write(X + 4);
  c.write(0x11000008); // another alias: no effect
  expectSeq(c, [X, X + 8], 'mh');
});
check('the counters count accesses, hits and misses', () => {
  const c = new XipCache();
  expectSeq(c, [X, X, X + 8], 'mhm');
  const s = c.stats;
  if (s.accesses !== 3 || s.hits !== 1 || s.misses !== 2) throw new Error(JSON.stringify(s));
});
check('a miss costs 56 clk_sys cycles at the Pico boot2 settings', () => {
  // (0 instruction + 8 address/mode + 4 wait + 16 data) SCLK * CLKDIV 2.
  const m = missCycles(BOOT2, RP2040.line);
  if (m !== 56) throw new Error(`missCycles = ${m}`);
  const m4 = missCycles({ ...BOOT2, clkdiv: 4 }, 8);
  if (m4 !== 112) throw new Error(`CLKDIV 4: ${m4}`);
  return `${m}`;
});
for (const [g, want] of [
  [{ size: 12288, ways: 2, line: 8 }, 'size 12288 is not a power of two'],
  [{ size: 16384, ways: 2, line: 6 }, 'line 6 is not a power of two'],
  [{ size: 16384, ways: 3, line: 8 }, '3 ways do not divide the 2048 lines'],
  [{ size: 16384, ways: 0, line: 8 }, '0 ways do not divide'],
  [{ size: 16384, ways: 2048 * 3 / 4, line: 8 }, 'do not divide'],
  [{ size: 8, ways: 1, line: 16 }, 'line 16 is larger than the cache'],
]) {
  check(`geometry ${g.size}/${g.ways}/${g.line} is refused`, () => {
    try {
      checkGeometry(g);
    } catch (e) {
      if (!String(e.message).includes(want)) throw new Error(`error ${e.message}, want ${want}`);
      return e.message;
    }
    throw new Error('accepted');
  });
}
check('geometries that are powers of two are accepted (1 way to fully associative)', () => {
  for (const g of [RP2040, { size: 16384, ways: 1, line: 8 }, { size: 16384, ways: 2048, line: 8 }, { size: 4096, ways: 4, line: 32 }]) {
    checkGeometry(g);
    new XipCache(g);
  }
});

// In rp2040js: 8 NOPs at 0x10000100 (two lines) and an LDR from a third
// line, run once cold and once warm, under the timing layer.
function parseModules(argv) {
  const i = argv.indexOf('--modules');
  return i >= 0 ? argv[i + 1] : path.join(__dirname, 'node_modules');
}
check('in rp2040js: cold fetches and loads pay 56 a line, warm ones nothing', () => {
  const { RP2040 } = require(path.resolve(parseModules(process.argv.slice(2)), 'rp2040js'));
  const timing = require('./m0plus-timing.js');
  const run = (withCache) => {
    const mcu = new RP2040();
    mcu.logger = { debug() {}, info() {}, warn() {}, error(c, m) { throw new Error(`[${c}] ${m}`); } };
    const code = [0xbf00, 0xbf00, 0xbf00, 0xbf00, 0xbf00, 0xbf00, 0xbf00, 0x6808, 0xbf00];
    code.forEach((h, i) => mcu.flashView.setUint16(0x100 + 2 * i, h, true));
    mcu.flashView.setUint32(0x1000, 0xcafef00d, true);
    const xip = withCache ? attach(mcu) : null;
    timing.patch(mcu.core, { xip });
    const pass = () => {
      mcu.core.PC = X + 0x100;
      mcu.core.registers[1] = X + 0x1000;
      let cyc = 0;
      for (let i = 0; i < code.length; i++) cyc += mcu.core.executeInstruction();
      if (mcu.core.registers[0] >>> 0 !== 0xcafef00d) throw new Error(`LDR read 0x${(mcu.core.registers[0] >>> 0).toString(16)}`);
      return cyc;
    };
    return { cold: pass(), warm: pass(), stats: xip && xip.stats };
  };
  const off = run(false), on = run(true);
  // Fetch lines 0x100 and 0x108 (the 9th halfword, 0x110, is a third), data line 0x1000: 4 misses.
  if (on.cold - off.cold !== 4 * 56) throw new Error(`cold added ${on.cold - off.cold}, want ${4 * 56}`);
  if (on.warm !== off.warm) throw new Error(`warm added ${on.warm - off.warm}, want 0`);
  if (on.stats.misses !== 4 || on.stats.addedCycles !== 224) throw new Error(JSON.stringify(on.stats));
  return `raw ${off.cold}, cold ${on.cold}, warm ${on.warm}`;
});

const failures = cases.filter((c) => !c.ok).length;
process.stdout.write(JSON.stringify({ cases, failures }) + '\n');
process.exitCode = failures ? 1 : 0;
