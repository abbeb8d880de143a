// Package picoboard is the host side of Study C: it builds, runs and checks
// the RP2040 benchmark firmware.
//
// Study C measures ML-KEM and ML-DSA on a Raspberry Pi Pico (RP2040
// Cortex-M0+, at 133 MHz unless the build asks otherwise: PLLFor) against
// RSA-2048, ECDSA P-256 and ECDH P-256. This package builds the bare-metal
// benchmark firmware in firmware/ (Build) from PQClean (npm) and mbedTLS
// (Debian's source package, EnsureMbedTLS), writes it as a RAM-only UF2
// (EncodeUF2), runs it in rp2040js (Emulate) or copies it to a board's
// BOOTSEL drive (Flash) and reads the board's UART (Read) with the serial
// line protocol's reader (datasets/picodata: ParseLine, ReadRun), re-checks
// the device's test vectors with cloudflare/circl and Go's crypto/mlkem,
// crypto/mldsa, crypto/rsa, crypto/ecdsa and crypto/ecdh (VerifyVectors),
// reports the image's size per section and per scheme from debug/elf
// (Sizes), times the same operations on the host CPU (HostTimings) and lists
// an image's provenance for meta.json (Image.Provenance).
//
// Boot path: RAM-only UF2. The bootrom loads it into SRAM and enters it at
// its lowest address (RP2040 datasheet 2.8.4.2), so no boot2 and no flash
// write are needed and the emulator, which has no bootrom, can do the same.
// The price is that code, data, heap and stack share the 264 KB SRAM: the
// schemes are split over several images (StandardImages) so ML-DSA-87's
// ~120 KB signing stack fits. With code_in "flash" or "flash-cold"
// (CodeIns) the code and read-only data go to flash instead, as in a
// pico-sdk build, and run in rp2040js through the modelled XIP cache
// (experiments/pico/emulator/xip-cache.js); such an image has no boot2,
// so it runs on the emulator only.
//
// Emulated results model no bus contention or wait states: label them as
// emulated (picodata.Dataset.Emulated) wherever they are shown.
package picoboard
