package picodata

import (
	"fmt"
	"io"
	"time"
)

// Study is Study C's name: meta.json's and results/pico.json's "study",
// and the folder of its runs, data/pico/.
const Study = "pico"

// Scheme names, as the firmware prints them.
var (
	KEMSchemes       = []string{"ml-kem-512", "ml-kem-768", "ml-kem-1024"}
	DSASchemes       = []string{"ml-dsa-44", "ml-dsa-65", "ml-dsa-87"}
	ClassicalSchemes = []string{"rsa-2048", "ecdsa-p256", "ecdh-p256"}
	// SPHINCSSchemes are SPHINCS+ round 3.1 "-simple" parameter sets
	// (PQClean's sphincs-<hash>-128<f|s>-simple): the code of FIPS 205's
	// SLH-DSA-SHA2-128f, SLH-DSA-SHAKE-128f and SLH-DSA-SHA2-128s before
	// standardisation. FIPS 205 hashes a 2-byte domain prefix before the
	// message and reads the FORS indices big-endian (base_2b); neither
	// changes which hashes are computed, so the cost is SLH-DSA's, but the
	// signatures are not FIPS 205 signatures (experiments/pico/slhverify).
	// Our extension of Study C: the original did not measure them.
	SPHINCSSchemes = []string{"sphincs-sha2-128f", "sphincs-shake-128f", "sphincs-sha2-128s"}
)

// SRAM of the RP2040 (datasheet 2.6.2): 264 KB at 0x20000000.
const (
	SRAMStart = 0x20000000
	SRAMSize  = 264 * 1024
)

// A Check is one host-side check of a device test vector.
type Check struct {
	Scheme string `json:"scheme"`
	Name   string `json:"check"`
	Lib    string `json:"library"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail,omitempty"`
}

// SectionSize is one allocated ELF section.
type SectionSize struct {
	Name string `json:"name"`
	Addr uint32 `json:"addr"`
	Size uint32 `json:"size"`
	Kind string `json:"kind"` // text, rodata, data, bss
}

// OwnerSize is the bytes one component (a scheme, PQClean's common code,
// mbedTLS, the firmware, libc) contributes, by kind.
type OwnerSize struct {
	Owner  string `json:"owner"`
	Text   uint32 `json:"text"`
	Rodata uint32 `json:"rodata"`
	Data   uint32 `json:"data"`
	Bss    uint32 `json:"bss"`
}

// SizeReport is the memory footprint of a firmware image.
type SizeReport struct {
	Sections []SectionSize `json:"sections"`
	Owners   []OwnerSize   `json:"owners"`
	// Image is what a flash image would hold: text + rodata + data.
	Image uint32 `json:"image_bytes"`
	// StaticRAM is data + bss + heap arena; the stack gets the rest of SRAM.
	StaticRAM uint32 `json:"static_ram_bytes"`
}

// WriteText prints the report as aligned text.
func (r *SizeReport) WriteText(w io.Writer) {
	fmt.Fprintf(w, "%-16s %10s %8s %s\n", "section", "addr", "size", "kind")
	for _, s := range r.Sections {
		fmt.Fprintf(w, "%-16s 0x%08x %8d %s\n", s.Name, s.Addr, s.Size, s.Kind)
	}
	fmt.Fprintf(w, "\n%-16s %8s %8s %8s %8s\n", "owner", "text", "rodata", "data", "bss")
	for _, o := range r.Owners {
		fmt.Fprintf(w, "%-16s %8d %8d %8d %8d\n", o.Owner, o.Text, o.Rodata, o.Data, o.Bss)
	}
	fmt.Fprintf(w, "\nimage (text+rodata+data) %d bytes; static RAM (data+bss+heap) %d bytes\n", r.Image, r.StaticRAM)
}

// HostTiming is one operation timed on the host CPU with one library.
// That is, n repetitions, each duration separately (so the study
// computes the same statistics as for the device).
type HostTiming struct {
	Scheme    string          `json:"scheme"`
	Op        string          `json:"op"`
	Lib       string          `json:"library"` // circl, crypto/mlkem, crypto/mldsa, crypto/rsa, crypto/ecdsa, crypto/ecdh
	N         int             `json:"n"`
	Durations []time.Duration `json:"durations_ns"`
}

// Mean returns the mean duration (0 for no repetitions).
func (h HostTiming) Mean() time.Duration {
	if len(h.Durations) == 0 {
		return 0
	}
	var s time.Duration
	for _, d := range h.Durations {
		s += d
	}
	return s / time.Duration(len(h.Durations))
}
