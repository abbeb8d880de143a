// Package picostudy is Study C's analysis. That is, it turns one recorded run
// of experiments/pico/picorun (data/pico/<run-id>/, read with
// datasets/picodata) into results/pico.json and renders the figures, LaTeX
// tables and number macros from it, as three stages of the repro engine
// (Stages).
//
// Statistics per scheme and operation are analysis/stats.Describe over the
// 1 MHz timer's times: n, mean, sample SD, median, p95 and p99 (R type 7
// quantiles), CV = SD/mean, min and max. Peak stack is the painted maximum
// over the operation's repetitions; flash and RAM sizes come from the ELF
// size report. Energy follows the paper's datasheet model,
// E = t x 3.3 V x 24 mA = t x 79.2 mW.
//
// A full ML-KEM exchange is keygen + encaps + decaps (sum of means, as the
// paper adds them); ECDH P-256's is the firmware's "exchange" operation
// (both parties' keygen and shared secret, timed as one), or 2 x keygen +
// 2 x shared when only those are recorded. ML-KEM vs ECDH ratios are given
// only when ECDH ran; otherwise they are listed under not_measured, never
// estimated.
//
// The Cortex-M4 comparison sets our mean SysTick cycles beside pqm4's
// published cycles for the same PQClean clean code (pqm4.csv beside the
// published values, cited there and in testdata/README.md). Every output says whether the
// numbers come from the emulator ("emulated") or a board.
//
// A run may hold several configurations: a profile's configurations run
// each image again in a folder <image>+<name> (configurations.go). The
// primary, [build]'s, is what every result above and every claim is made
// from. Each other configuration is summarised with its times at its own
// clock (mean cycles / clk_sys) and set beside the primary per operation,
// the factors that differ named. An image's configuration is its folder's
// suffix, which image.json's configuration must match (a named one needs
// image.json); its clock is the firmware's clock_hz, which image.json's
// clock_mhz must match; runtime, message_bytes and code_in come from
// image.json and its provenance, each at the pinned runs' level when
// absent. Images of one configuration at two clocks, or a level the
// analysis cannot name, are errors.
package picostudy
