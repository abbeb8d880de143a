package picoboard

import (
	"bytes"
	"debug/elf"
	"fmt"
	"slices"
	"strings"
)

// DefaultCodeIn is where the firmware's code runs by default: SRAM, as in
// every pinned run.
const DefaultCodeIn = "ram"

// CodeIns are the levels of `[build] code_in`. "ram" links link.ld (code
// and data in SRAM); "flash" links link-flash.ld (code and read-only data
// in flash, run through the modelled XIP cache as a pico-sdk build runs
// them; the cache warm, as the code before each operation left it);
// "flash-cold" is "flash" with the cache flushed before every measured
// operation, so each starts cold, as the first one after boot does.
var CodeIns = []string{DefaultCodeIn, "flash", "flash-cold"}

// CheckCodeIn returns an error naming the levels unless name is one of
// CodeIns.
func CheckCodeIn(name string) error {
	if slices.Contains(CodeIns, name) {
		return nil
	}
	return fmt.Errorf("code_in %q is not one of %s", name, strings.Join(CodeIns, ", "))
}

// inFlash reports whether the level puts the code in flash.
func inFlash(codeIn string) bool { return strings.HasPrefix(codeIn, "flash") }

// codeInDefines are the firmware defines of a level. There are none for "ram",
// so the RAM image is what it was; CODE_IN_FLASH (crt.c copies .data) and, for
// "flash-cold", XIP_COLD (bench.c flushes the cache, xip.h).
func codeInDefines(codeIn string) []string {
	switch codeIn {
	case "flash":
		return []string{"CODE_IN_FLASH"}
	case "flash-cold":
		return []string{"CODE_IN_FLASH", "XIP_COLD"}
	}
	return nil
}

// flashLDFlags are a flash image's extra linker flags. --nmagic stops GNU
// ld from aligning the first segment to its 4 kB page, which put the ELF
// and program headers into the image at 0x10000000, below the entry stub
// at 0x10000100: the emulator, which enters a UF2 at its lowest address
// (run.js, as the bootrom does a RAM image), ran the headers' bytes as
// code first, and in some images (the classic one with usbirq.c) they
// faulted.
var flashLDFlags = []string{"-Wl,--nmagic"}

// linkScript is the firmware's linker script for a level.
func linkScript(codeIn string) string {
	if inFlash(codeIn) {
		return "link-flash.ld"
	}
	return "link.ld"
}

// The Pico's flash as link-flash.ld uses it: 2 MB at the XIP window's
// cacheable alias (RP2040 datasheet 2.6.3; pico-sdk boards/pico.h).
const (
	FlashStart = 0x10000000
	FlashSize  = 2 << 20
)

// imageUF2 encodes the ELF's segments as UF2 after checking that every one
// lies in SRAM (RAM-only image) or, for a flash image, in flash.
func imageUF2(tmpELF string, elfBytes []byte, codeIn string) ([]byte, error) {
	if !inFlash(codeIn) {
		return ramUF2(tmpELF, elfBytes)
	}
	return regionUF2(tmpELF, elfBytes, FlashStart, FlashSize, "flash; a flash image loads only into flash")
}

// regionUF2 encodes the ELF's loadable segments as UF2 for the RP2040
// family. It first checks that each lies in [start, start+size); where names
// the region in the error.
func regionUF2(tmpELF string, elfBytes []byte, start, size uint64, where string) ([]byte, error) {
	ef, err := elf.NewFile(bytes.NewReader(elfBytes))
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", tmpELF, err)
	}
	segs, err := LoadSegments(ef)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", tmpELF, err)
	}
	for _, s := range segs {
		if uint64(s.Addr) < start || uint64(s.Addr)+uint64(len(s.Data)) > start+size {
			return nil, fmt.Errorf("%s: segment at 0x%08x is outside %s", tmpELF, s.Addr, where)
		}
	}
	return EncodeUF2(segs, UF2FamilyRP2040)
}

// XIPStats counts what experiments/pico/emulator/xip-cache.js saw in one
// run of a flash image. They are the reads in the XIP window, hits,
// misses, flushes, the cycles of one miss and their sum (included in
// Cycles and in Timing.AddedCycles).
type XIPStats struct {
	Accesses    uint64 `json:"accesses"`
	Hits        uint64 `json:"hits"`
	Misses      uint64 `json:"misses"`
	Flushes     uint64 `json:"flushes"`
	MissCycles  uint64 `json:"missCycles"`
	AddedCycles uint64 `json:"addedCycles"`
	Geometry    struct {
		Size int `json:"size"`
		Ways int `json:"ways"`
		Line int `json:"line"`
	} `json:"geometry"`
}

// xipArgs are run.js's arguments for an image: the XIP cache model, at the
// RP2040's geometry, for a flash image; none for a RAM image.
func xipArgs(img Image) []string {
	if inFlash(img.CodeIn) {
		return []string{"--xip-cache"}
	}
	return nil
}
