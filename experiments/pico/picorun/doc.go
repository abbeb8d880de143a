// Package picorun runs Study C from experiments/pico.toml into a raw dataset.
//
// Study C measures ML-KEM and ML-DSA against RSA-2048, ECDSA P-256 and
// ECDH P-256 on a Raspberry Pi Pico (RP2040 Cortex-M0+ at [build]
// clock_mhz, 133 MHz in every pinned run). The dataset:
//
//	data/pico/<run-id>/
//	  meta.json                    provenance (internal/provenance), with the
//	                               board ("rp2040js 1.4.1 (emulated)"), tools,
//	                               simulated MHz and wall time per image, and
//	                               the SHA-256 of every file below
//	  <image>/serial.log           the UART bytes, verbatim
//	  <image>/measurements.csv.gz  one row per timed operation (deterministic gzip)
//	  <image>/verify.json          host checks of the device's test vectors
//	                               (cloudflare/circl, crypto/mlkem, crypto/mldsa)
//	  <image>/size.json            ELF sections and bytes per scheme
//	  <image>/image.json           build provenance (firmware ID, compiler,
//	                               flags, source hashes), run status and the
//	                               board that ran it
//
// With [board] replicate = true every image runs on every board, into
// <image>@<board number>/ (same files); meta.json's measured.boards lists
// each board's ID, slot, kind, port and folders.
//
// The firmware, emulator, serial reader and host checks are
// experiments/pico/picoboard; this package decides what to run (profiles, images,
// seed, boards), runs images on the boards at once (emulator instances on
// the machine's two cores, or several real boards; spread or replicated),
// tags each with its board (boards.go), refuses a run whose device or host checks failed, and registers a
// good run atomically (repro.NewRun/Commit) before pinning it in the spec.
// The analysis (analysis/picostudy) reads only the pinned run.
package picorun
