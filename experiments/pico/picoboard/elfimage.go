package picoboard

import (
	"debug/elf"
	"fmt"
	"sort"
)

// LoadSegments returns the bytes an ELF file asks to be loaded (PT_LOAD
// program headers with file contents, at their physical address), sorted by
// address. For the RAM-only firmware these all lie in SRAM.
func LoadSegments(f *elf.File) ([]Segment, error) {
	var segs []Segment
	for _, p := range f.Progs {
		if p.Type != elf.PT_LOAD || p.Filesz == 0 {
			continue
		}
		data := make([]byte, p.Filesz)
		if _, err := p.ReadAt(data, 0); err != nil {
			return nil, fmt.Errorf("read ELF segment at 0x%x: %w", p.Paddr, err)
		}
		if p.Paddr > 0xffffffff {
			return nil, fmt.Errorf("ELF segment address 0x%x is not 32-bit", p.Paddr)
		}
		segs = append(segs, Segment{Addr: uint32(p.Paddr), Data: data})
	}
	if len(segs) == 0 {
		return nil, fmt.Errorf("ELF has no loadable segments")
	}
	sort.Slice(segs, func(i, j int) bool { return segs[i].Addr < segs[j].Addr })
	return segs, nil
}
