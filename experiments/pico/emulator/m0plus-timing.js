// m0plus-timing.js: the cycles rp2040js leaves out of the Cortex-M0+
// timings, added at run time around its core (no rp2040js code is copied or
// edited). Shared by run.js (the benchmark runner) and cycles.js (the
// instrument check), so both count the same cycles.
//
// Source: ARM Cortex-M0+ Technical Reference Manual, r0p1 (ARM DDI 0484C),
// zero-wait-state memory as the RP2040's SRAM is (RP2040 datasheet 2.6):
//  - table 3-1, "PUSH {<loreglist>, LR}: 1+N" and "POP {<loreglist>, PC}:
//    3+N", N the number of elements in the list, LR and PC included.
//    rp2040js 1.4.1 counts only the low registers (PUSH {lr} 1 cycle,
//    POP {r4, pc} 4), so each of the two forms is one cycle short.
//  - section 3.6.1 "Exception handling": the interrupt latency, from the
//    request to the handler's first instruction, is at worst 15 cycles in
//    a zero-wait-state system without jitter suppression; the TRM gives no
//    other figure (late arrival and tail-chaining aside, which our
//    firmware does not provoke), so every entry is charged 15. rp2040js
//    stacks the frame and enters the handler without charging a cycle.
// Exception return (EXC_RETURN through BX or POP) has no figure of its own
// in the TRM; it stays at the cycles of the BX or POP that starts it.
//
// With an XIP cache model (xip-cache.js, run.js --xip-cache) the cycles of
// its misses during an instruction, fetches and loads alike, are added to
// that instruction too.
'use strict';

// PUSH_LR and POP_PC are the cycles table 3-1 adds for LR in a PUSH and PC
// in a POP beyond what rp2040js charges.
const PUSH_LR = 1;
const POP_PC = 1;
// EXCEPTION_ENTRY is the TRM's interrupt latency (section 3.6.1).
const EXCEPTION_ENTRY = 15;

// extraCycles returns the cycles one instruction with the given first
// halfword takes beyond rp2040js's count.
function extraCycles(opcode) {
  // PUSH with M (LR) set: 1011 010 1 xxxxxxxx.
  if ((opcode & 0xff00) === 0xb500) return PUSH_LR;
  // POP with P (PC) set: 1011 110 1 xxxxxxxx.
  if ((opcode & 0xff00) === 0xbd00) return POP_PC;
  return 0;
}

// patch wraps one rp2040js CortexM0Core so that executeInstruction returns
// (and adds to core.cycles) the TRM's count, and returns the counters of
// what it added: pushLR, popPC and exceptionEntries (occurrences) and
// addedCycles (their sum). opts.xip, an xip-cache.js attach() result,
// adds its miss cycles (and counts them in addedCycles).
function patch(core, opts = {}) {
  const xip = opts.xip || null;
  const stats = { pushLR: 0, popPC: 0, exceptionEntries: 0, addedCycles: 0 };
  const exec = core.executeInstruction;
  const enter = core.exceptionEntry;
  // Cycles of exception entries not yet charged: an entry happens inside
  // executeInstruction (before the handler's first instruction is fetched)
  // or, waking from WFI, in setInterrupt between two instructions.
  let pending = 0;
  let handlerPC = -1;
  core.exceptionEntry = function (exceptionNumber) {
    const r = enter.call(this, exceptionNumber);
    pending += EXCEPTION_ENTRY;
    stats.exceptionEntries++;
    handlerPC = this.PC & ~1;
    return r;
  };
  // Code in SRAM (all of ours) is read from the array rp2040js keeps it
  // in, which is much cheaper per instruction than a bus read; anything
  // else goes through the core's readUint16.
  const sram = core.rp2040 && core.rp2040.sram;
  const SRAM_START = 0x20000000;
  const sramEnd = sram ? SRAM_START + sram.length - 1 : 0;
  // With the cache model on, code in the XIP window is read from the
  // flash array too, so this look at the opcode is not a cache access.
  const flash = xip && core.rp2040.flashView;
  const fetch = (self, pc) => (pc >= SRAM_START && pc < sramEnd
    ? sram[pc - SRAM_START] | (sram[pc - SRAM_START + 1] << 8)
    : flash && pc >= 0x10000000 && pc < 0x14000000
      ? flash.getUint16(pc & 0xfffffe, true)
      : self.readUint16(pc));
  core.executeInstruction = function () {
    handlerPC = -1;
    let opcode = fetch(this, this.PC & ~1);
    const c = exec.call(this);
    // An entry taken inside the call executed the handler's first
    // instruction, not the one fetched above.
    if (handlerPC >= 0) opcode = fetch(this, handlerPC);
    const x = extraCycles(opcode);
    if (x) {
      if ((opcode & 0xff00) === 0xb500) stats.pushLR++;
      else stats.popPC++;
    }
    const add = x + pending + (xip ? xip.take() : 0);
    pending = 0;
    if (!add) return c;
    this.cycles += add;
    stats.addedCycles += add;
    return c + add;
  };
  return stats;
}

module.exports = { patch, extraCycles, PUSH_LR, POP_PC, EXCEPTION_ENTRY };
