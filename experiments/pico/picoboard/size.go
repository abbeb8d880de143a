package picoboard

import (
	"debug/dwarf"
	"debug/elf"
	"fmt"
	"slices"
	"sort"
	"strings"

	"pqrepro/datasets/picodata"
)

// ownerOf maps a source path (from an STT_FILE symbol or a DWARF compile
// unit) or a symbol name to its component.
func ownerOf(path string) string {
	p := strings.ReplaceAll(path, "\\", "/")
	for _, s := range slices.Concat(picodata.KEMSchemes, picodata.DSASchemes, picodata.SPHINCSSchemes) {
		if strings.Contains(p, "/"+s+"/") || strings.Contains(p, "/"+s+"-simple/") {
			return s
		}
	}
	switch {
	case strings.Contains(p, "PQClean/common/"):
		return "pqclean-common"
	case strings.Contains(p, "mbedtls") && strings.Contains(p, "/library/"):
		// The scheme-specific mbedTLS modules count for their scheme; the
		// shared ones (bignum, ecp, sha256, md, asn1, ...) as "mbedtls".
		switch base := p[strings.LastIndex(p, "/")+1:]; base {
		case "rsa.c", "rsa_internal.c":
			return "rsa-2048"
		case "ecdsa.c":
			return "ecdsa-p256"
		case "ecdh.c":
			return "ecdh-p256"
		}
		return "mbedtls"
	case strings.Contains(p, "mbedtls"):
		return "mbedtls"
	case strings.Contains(p, "experiments/pico/firmware/"):
		return "firmware"
	}
	return ""
}

var symbolPrefixes = []struct{ prefix, owner string }{
	{"PQCLEAN_MLKEM512_", "ml-kem-512"}, {"PQCLEAN_MLKEM768_", "ml-kem-768"}, {"PQCLEAN_MLKEM1024_", "ml-kem-1024"},
	{"PQCLEAN_MLDSA44_", "ml-dsa-44"}, {"PQCLEAN_MLDSA65_", "ml-dsa-65"}, {"PQCLEAN_MLDSA87_", "ml-dsa-87"},
	{"PQCLEAN_SPHINCSSHA2128FSIMPLE_", "sphincs-sha2-128f"}, {"PQCLEAN_SPHINCSSHAKE128FSIMPLE_", "sphincs-shake-128f"},
	{"PQCLEAN_SPHINCSSHA2128SSIMPLE_", "sphincs-sha2-128s"},
	{"mbedtls_", "mbedtls"},
}

// SizeReportFile reads an ELF file and builds its SizeReport.
func SizeReportFile(path string) (*picodata.SizeReport, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, fmt.Errorf("size report: open %s: %w", path, err)
	}
	defer f.Close()
	r, err := Sizes(f)
	if err != nil {
		return nil, fmt.Errorf("size report %s: %w", path, err)
	}
	return r, nil
}

func sectionKind(s *elf.Section) string {
	switch {
	case s.Flags&elf.SHF_ALLOC == 0:
		return ""
	case s.Flags&elf.SHF_EXECINSTR != 0:
		return "text"
	case s.Type == elf.SHT_NOBITS:
		return "bss"
	case s.Flags&elf.SHF_WRITE != 0:
		return "data"
	}
	return "rodata"
}

// Sizes builds the report: per allocated section, and per owner by summing
// symbol sizes. A local symbol belongs to the source file named by the
// STT_FILE symbol before it when that names a path (GNU ld keeps each
// object's locals together; recent gcc writes only the base name, so this
// rarely decides); a variable to the DWARF compile unit that declares it at
// that address; a function to the compile unit whose ranges hold it; the
// rest by name prefix; the rest of a section (padding, libc objects
// without symbols sizes) is "other". Text and rodata of an executable
// section (literal pools) count as text.
func Sizes(f *elf.File) (*picodata.SizeReport, error) {
	rep := &picodata.SizeReport{}
	for _, s := range f.Sections {
		k := sectionKind(s)
		if k == "" || s.Size == 0 {
			continue
		}
		rep.Sections = append(rep.Sections, picodata.SectionSize{Name: s.Name, Addr: uint32(s.Addr), Size: uint32(s.Size), Kind: k})
		switch k {
		case "text", "rodata", "data":
			rep.Image += uint32(s.Size)
		}
		if k == "data" || k == "bss" {
			rep.StaticRAM += uint32(s.Size)
		}
	}
	type rng struct {
		lo, hi uint64
		owner  string
	}
	var cuRanges []rng
	varOwner := map[uint64]string{}
	if d, err := f.DWARF(); err == nil {
		rd := d.Reader()
		cuOwner := ""
		for {
			e, err := rd.Next()
			if err != nil || e == nil {
				break
			}
			switch e.Tag {
			case dwarf.TagCompileUnit:
				name, _ := e.Val(dwarf.AttrName).(string)
				dir, _ := e.Val(dwarf.AttrCompDir).(string)
				cuOwner = ownerOf(name)
				if cuOwner == "" {
					cuOwner = ownerOf(dir + "/" + name)
				}
				if rs, err := d.Ranges(e); err == nil && cuOwner != "" {
					for _, r := range rs {
						cuRanges = append(cuRanges, rng{r[0], r[1], cuOwner})
					}
				}
				if cuOwner == "" {
					rd.SkipChildren()
				}
			case dwarf.TagVariable:
				// A static or global with a fixed address: DW_OP_addr (0x03)
				// followed by a 4-byte address (DWARF 5, 7.7.1).
				if loc, ok := e.Val(dwarf.AttrLocation).([]byte); ok && len(loc) == 5 && loc[0] == 0x03 {
					addr := uint64(loc[1]) | uint64(loc[2])<<8 | uint64(loc[3])<<16 | uint64(loc[4])<<24
					varOwner[addr] = cuOwner
				}
			}
		}
	}
	syms, err := f.Symbols()
	if err != nil {
		return nil, fmt.Errorf("read symbols: %w", err)
	}
	owners := map[string]*picodata.OwnerSize{}
	get := func(o string) *picodata.OwnerSize {
		if owners[o] == nil {
			owners[o] = &picodata.OwnerSize{Owner: o}
		}
		return owners[o]
	}
	counted := map[int]uint64{}
	file := ""
	for _, s := range syms {
		typ := elf.ST_TYPE(s.Info)
		if typ == elf.STT_FILE {
			file = s.Name
			continue
		}
		if s.Size == 0 || s.Section == elf.SHN_UNDEF || int(s.Section) >= len(f.Sections) || s.Section >= elf.SHN_LORESERVE {
			continue
		}
		sec := f.Sections[s.Section]
		kind := sectionKind(sec)
		if kind == "" || (typ != elf.STT_FUNC && typ != elf.STT_OBJECT) {
			continue
		}
		owner := ""
		if elf.ST_BIND(s.Info) == elf.STB_LOCAL {
			owner = ownerOf(file)
		}
		if owner == "" && typ == elf.STT_OBJECT {
			owner = varOwner[s.Value]
		}
		if owner == "" {
			addr := s.Value &^ 1
			for _, r := range cuRanges {
				if addr >= r.lo && addr < r.hi {
					owner = r.owner
					break
				}
			}
		}
		if owner == "" {
			for _, p := range symbolPrefixes {
				if strings.HasPrefix(s.Name, p.prefix) {
					owner = p.owner
					break
				}
			}
		}
		if owner == "" {
			owner = "libc"
		}
		o := get(owner)
		if typ == elf.STT_OBJECT && kind == "text" {
			kind = "rodata"
		}
		switch kind {
		case "text":
			o.Text += uint32(s.Size)
		case "rodata":
			o.Rodata += uint32(s.Size)
		case "data":
			o.Data += uint32(s.Size)
		case "bss":
			o.Bss += uint32(s.Size)
		}
		counted[int(s.Section)] += s.Size
	}
	// Whatever symbols do not cover (alignment, literal pools of
	// functions without sizes, the heap arena) is "other".
	for i, sec := range f.Sections {
		k := sectionKind(sec)
		if k == "" || sec.Size <= counted[i] {
			continue
		}
		rest := uint32(sec.Size - counted[i])
		o := get("other")
		switch k {
		case "text":
			o.Text += rest
		case "rodata":
			o.Rodata += rest
		case "data":
			o.Data += rest
		case "bss":
			o.Bss += rest
		}
	}
	for _, o := range owners {
		rep.Owners = append(rep.Owners, *o)
	}
	sort.Slice(rep.Owners, func(i, j int) bool { return rep.Owners[i].Owner < rep.Owners[j].Owner })
	return rep, nil
}
