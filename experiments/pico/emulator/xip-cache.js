// xip-cache.js: a model of the RP2040's XIP cache and of what a miss costs,
// charged on top of rp2040js (which reads flash without a wait state). Used
// by m0plus-timing.js when run.js is given --xip-cache; off by default.
//
// The cache (RP2040 datasheet, build 2023-06, section 2.6.3 "XIP"):
//  - 2.6.3.1: "The cache is 16 kB, two way set-associative, 1 cycle hit."
//    A hit costs what an SRAM access costs (1 cycle, 2.6.2), so a hit adds
//    nothing to rp2040js's count.
//  - 2.6.3.2: the flush "takes just over 1024 clock cycles (16 kB total
//    size / 8 bytes per line / 2 ways per set)": 8-byte lines, 1024 sets.
//  - 2.6.3.1, the four aliases of the 24-bit flash space: 0x10... cacheable,
//    allocating ("normal cache operation"); 0x11... cacheable,
//    non-allocating ("check for hit, don't update cache on miss"); 0x12...
//    non-cacheable, allocating ("don't check for hit, always update
//    cache"); 0x13... non-cacheable, non-allocating (bypass). A write to
//    0x10... "will look up the addressed location in the cache, and delete
//    any matching entry found" (2.6.3.2).
//  - 2.6.3.2 and the FLUSH register (XIP_CTRL + 0x4, XIP_CTRL at
//    0x14000000): writing 1 clears every tag.
// The datasheet gives no replacement policy for the two ways. We fill an
// invalid way first (way 0 before way 1) and otherwise evict the least
// recently used way of the set (one bit per set): our assumption, stated
// wherever the figures are shown.
//
// The cost of a miss: the line is read from the QSPI flash through the SSI
// as pico-sdk's second stage bootloader for the Pico's W25Q080 leaves it
// (src/rp2040/boot_stage2/boot2_w25q080.S): SCLK = clk_sys /
// PICO_FLASH_SPI_CLKDIV, and the Pico's board header
// (src/boards/include/boards/pico.h) sets PICO_FLASH_SPI_CLKDIV 2; quad
// I/O ("Read data fast quad IO", 0xEB) in continuous read mode (mode bits
// 0xa0), so no command byte is sent (INST_L none); ADDR_L 8 ("address +
// mode bits, divided by 4"), i.e. 24 address and 8 mode bits, 4 bits a
// clock on quad I/O: 8 SCLK; WAIT_CYCLES 4 dummy clocks; then the 8-byte
// line, 64 bits at 4 a clock: 16 SCLK. A miss is 8 + 4 + 16 = 28 SCLK =
// 56 clk_sys cycles at any clk_sys (the SSI divides clk_sys), 448 ns at
// 125 MHz, 421 ns at 133 MHz.
// Simplifications: one serial transfer per line (address once, then both
// words of the line); no chip-select, FIFO or bus-synchronisation cycles
// beyond the serial clocks (so the cost is a lower bound); the core stalls
// for the whole fill (no critical-word-first); no DMA or second core
// competes for the SSI; no streaming (2.6.3.4). A flush costs nothing to
// the firmware (ours flushes outside the measured span).
'use strict';

// XIP_BASE..XIP_END is the XIP window, four 16 MB aliases (2.6.3.1).
const XIP_BASE = 0x10000000;
const XIP_END = 0x14000000;
// XIP_CTRL_FLUSH is the FLUSH register (XIP_CTRL base 0x14000000 + 0x4).
const XIP_CTRL_FLUSH = 0x14000004;

// RP2040 is the datasheet's geometry (2.6.3.1, 2.6.3.2).
const RP2040 = Object.freeze({ size: 16 * 1024, ways: 2, line: 8 });

// BOOT2 is the SSI as boot2_w25q080.S with the Pico's board header leaves it.
const BOOT2 = Object.freeze({ clkdiv: 2, addrL: 8, waitCycles: 4, instBits: 0, busWidth: 4 });

const isPow2 = (n) => Number.isInteger(n) && n > 0 && (n & (n - 1)) === 0;

// checkGeometry throws a clear error unless size and line are powers of
// two, ways divides the number of lines, and the sets are a power of two.
function checkGeometry(g) {
  const { size, ways, line } = g;
  if (!isPow2(size)) throw new Error(`xip cache: size ${size} is not a power of two`);
  if (!isPow2(line)) throw new Error(`xip cache: line ${line} is not a power of two`);
  if (line > size) throw new Error(`xip cache: line ${line} is larger than the cache (${size})`);
  const lines = size / line;
  if (!Number.isInteger(ways) || ways < 1 || lines % ways !== 0) {
    throw new Error(`xip cache: ${ways} ways do not divide the ${lines} lines of ${size} bytes / ${line}`);
  }
  if (!isPow2(lines / ways)) throw new Error(`xip cache: ${lines / ways} sets (${lines} lines / ${ways} ways) is not a power of two`);
}

// missCycles returns the clk_sys cycles of one line fill through the SSI:
// (instruction bits + address and mode clocks + wait clocks + data clocks)
// times the clock divider.
function missCycles(ssi = BOOT2, line = RP2040.line) {
  const sclk = ssi.instBits + ssi.addrL + ssi.waitCycles + (line * 8) / ssi.busWidth;
  return sclk * ssi.clkdiv;
}

// XipCache is the tag store of a set-associative cache with LRU
// replacement; it holds no data (rp2040js keeps the flash contents).
class XipCache {
  constructor(geometry = RP2040) {
    checkGeometry(geometry);
    this.size = geometry.size;
    this.ways = geometry.ways;
    this.line = geometry.line;
    this.sets = geometry.size / geometry.line / geometry.ways;
    this.lineShift = Math.log2(geometry.line);
    // tags[set * ways + w]: the line number held, or -1 (invalid).
    this.tags = new Int32Array(this.sets * this.ways).fill(-1);
    // age[set * ways + w]: last use, larger is more recent.
    this.age = new Float64Array(this.sets * this.ways);
    this.clock = 0;
    this.stats = { accesses: 0, hits: 0, misses: 0, flushes: 0 };
  }

  flush() {
    this.tags.fill(-1);
    this.age.fill(0);
    this.stats.flushes++;
  }

  // lookup returns the way holding line n in its set, or -1.
  lookup(n) {
    const base = (n & (this.sets - 1)) * this.ways;
    for (let w = 0; w < this.ways; w++) if (this.tags[base + w] === n) return w;
    return -1;
  }

  // fill puts line n into its set: the first invalid way, else the least
  // recently used one.
  fill(n) {
    const base = (n & (this.sets - 1)) * this.ways;
    let victim = -1;
    for (let w = 0; w < this.ways && victim < 0; w++) if (this.tags[base + w] === -1) victim = w;
    if (victim < 0) {
      victim = 0;
      for (let w = 1; w < this.ways; w++) if (this.age[base + w] < this.age[base + victim]) victim = w;
    }
    this.tags[base + victim] = n;
    this.age[base + victim] = ++this.clock;
  }

  // read looks up a read of the system address addr in the XIP window
  // under its alias's rules and returns true when it needs no flash
  // transfer (a hit). Addresses outside the window are not the cache's.
  read(addr) {
    const alias = (addr >>> 24) & 0x3;
    const n = (addr & 0xffffff) >>> this.lineShift;
    this.stats.accesses++;
    const check = alias === 0 || alias === 1;
    const allocate = alias === 0 || alias === 2;
    if (check) {
      const w = this.lookup(n);
      if (w >= 0) {
        this.age[(n & (this.sets - 1)) * this.ways + w] = ++this.clock;
        this.stats.hits++;
        return true;
      }
    }
    this.stats.misses++;
    if (allocate) {
      // The non-cacheable allocating alias may find the line present.
      const w = check ? -1 : this.lookup(n);
      if (w >= 0) this.age[(n & (this.sets - 1)) * this.ways + w] = ++this.clock;
      else this.fill(n);
    }
    return false;
  }

  // write deletes the line of a write to the cacheable allocating alias.
  write(addr) {
    if (((addr >>> 24) & 0x3) !== 0) return;
    const n = (addr & 0xffffff) >>> this.lineShift;
    const w = this.lookup(n);
    if (w >= 0) this.tags[(n & (this.sets - 1)) * this.ways + w] = -1;
  }
}

// attach wraps an rp2040js RP2040's reads so that every read in the XIP
// window (instruction fetches and data loads alike) goes through a cache
// of the given geometry, and writes to FLUSH flush it. It returns the
// cache, its counters (xip.stats plus missCycles and addedCycles) and
// take(), which returns the miss cycles charged since the last call.
function attach(mcu, opts = {}) {
  const cache = new XipCache(opts.geometry || RP2040);
  const miss = opts.missCycles !== undefined ? opts.missCycles : missCycles(BOOT2, cache.line);
  let pending = 0;
  let added = 0;
  const r32 = mcu.readUint32.bind(mcu);
  const r16 = mcu.readUint16.bind(mcu);
  const r8 = mcu.readUint8.bind(mcu);
  const w32 = mcu.writeUint32.bind(mcu);
  const w16 = mcu.writeUint16.bind(mcu);
  const w8 = mcu.writeUint8.bind(mcu);
  const inXIP = (a) => a >= XIP_BASE && a < XIP_END;
  const touch = (a) => {
    if (!cache.read(a)) {
      pending += miss;
      added += miss;
    }
  };
  // Reads in the window are served here from rp2040js's flash array (the
  // low 24 bits address the flash in every alias), so a read is looked up
  // once however rp2040js would have split it.
  const view = mcu.flashView;
  const flash = mcu.flash;
  mcu.readUint32 = (a) => {
    a >>>= 0;
    if (inXIP(a)) { touch(a); return view.getUint32(a & 0xfffffc, true); }
    if (a === XIP_CTRL_FLUSH) return 0; // a read of FLUSH waits for the flush (2.6.3.2)
    return r32(a);
  };
  mcu.readUint16 = (a) => {
    a >>>= 0;
    if (inXIP(a)) { touch(a); return view.getUint16(a & 0xfffffe, true); }
    return r16(a);
  };
  mcu.readUint8 = (a) => {
    a >>>= 0;
    if (inXIP(a)) { touch(a); return flash[a & 0xffffff]; }
    return r8(a);
  };
  mcu.writeUint32 = (a, v) => {
    a >>>= 0;
    if (a === XIP_CTRL_FLUSH) { if (v & 1) cache.flush(); return; }
    if (inXIP(a)) { cache.write(a); return; }
    w32(a, v);
  };
  mcu.writeUint16 = (a, v) => {
    a >>>= 0;
    if (inXIP(a)) { cache.write(a); return; }
    w16(a, v);
  };
  mcu.writeUint8 = (a, v) => {
    a >>>= 0;
    if (inXIP(a)) { cache.write(a); return; }
    w8(a, v);
  };
  const stats = cache.stats;
  stats.missCycles = miss;
  Object.defineProperty(stats, 'addedCycles', { get: () => added, enumerable: true });
  return {
    cache,
    stats,
    take() {
      const p = pending;
      pending = 0;
      return p;
    },
  };
}

module.exports = { XipCache, attach, checkGeometry, missCycles, RP2040, BOOT2, XIP_BASE, XIP_END, XIP_CTRL_FLUSH };
