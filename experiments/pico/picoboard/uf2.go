package picoboard

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
)

// UF2 constants from the UF2 specification (github.com/microsoft/uf2,
// README "File format"). Every block is 512 bytes, little-endian, with two
// start magics, flags, target address, payload size, block number, block
// count, a family ID (when flag 0x2000 is set), 476 bytes of data of which
// the first payload-size bytes count, and an end magic.
const (
	UF2MagicStart0 = 0x0A324655 // "UF2\n"
	UF2MagicStart1 = 0x9E5D5157
	UF2MagicEnd    = 0x0AB16F30

	UF2FlagNotMainFlash = 0x00000001
	UF2FlagFamilyID     = 0x00002000

	// UF2FamilyRP2040 is the RP2040's family ID (RP2040 datasheet 2.8.4.2
	// and the UF2 families list).
	UF2FamilyRP2040 = 0xE48BFF56

	UF2BlockSize = 512
	// UF2Payload is the payload per block that the RP2040 bootrom accepts:
	// it requires 256 bytes, 256-aligned (datasheet 2.8.4.2).
	UF2Payload = 256
	uf2DataMax = 476
)

// A Segment is a run of bytes to load at a target address.
type Segment struct {
	Addr uint32
	Data []byte
}

// EncodeUF2 turns segments into a UF2 file for the RP2040. That is, 256-byte
// payloads at 256-aligned addresses (gaps inside a 256-byte page are
// zero-filled), family ID flag set, blocks numbered 0..n-1 in ascending
// address order.
func EncodeUF2(segs []Segment, family uint32) ([]byte, error) {
	pages := map[uint32][]byte{}
	for _, s := range segs {
		if uint64(s.Addr)+uint64(len(s.Data)) > 1<<32 {
			return nil, fmt.Errorf("uf2: segment at 0x%08x with %d bytes passes 4 GiB", s.Addr, len(s.Data))
		}
		for i, b := range s.Data {
			a := s.Addr + uint32(i)
			base := a &^ (UF2Payload - 1)
			p := pages[base]
			if p == nil {
				p = make([]byte, UF2Payload)
				pages[base] = p
			}
			p[a-base] = b
		}
	}
	if len(pages) == 0 {
		return nil, errors.New("uf2: no data to encode")
	}
	addrs := make([]uint32, 0, len(pages))
	for a := range pages {
		addrs = append(addrs, a)
	}
	sort.Slice(addrs, func(i, j int) bool { return addrs[i] < addrs[j] })
	out := make([]byte, 0, len(addrs)*UF2BlockSize)
	for n, a := range addrs {
		var blk [UF2BlockSize]byte
		le := binary.LittleEndian
		le.PutUint32(blk[0:], UF2MagicStart0)
		le.PutUint32(blk[4:], UF2MagicStart1)
		le.PutUint32(blk[8:], UF2FlagFamilyID)
		le.PutUint32(blk[12:], a)
		le.PutUint32(blk[16:], UF2Payload)
		le.PutUint32(blk[20:], uint32(n))
		le.PutUint32(blk[24:], uint32(len(addrs)))
		le.PutUint32(blk[28:], family)
		copy(blk[32:], pages[a])
		le.PutUint32(blk[508:], UF2MagicEnd)
		out = append(out, blk[:]...)
	}
	return out, nil
}

// A UF2Block is one decoded block.
type UF2Block struct {
	Flags, Addr, BlockNo, NumBlocks, Family uint32
	Data                                    []byte
}

// DecodeUF2 checks a UF2 file against the specification (magics, payload
// size at most 476, block numbering, one block count, one family) and
// returns its blocks. It is the inverse of EncodeUF2 and what a bootloader
// would accept.
func DecodeUF2(b []byte) ([]UF2Block, error) {
	if len(b) == 0 || len(b)%UF2BlockSize != 0 {
		return nil, fmt.Errorf("uf2: %d bytes is not a positive multiple of %d", len(b), UF2BlockSize)
	}
	le := binary.LittleEndian
	var out []UF2Block
	for off := 0; off < len(b); off += UF2BlockSize {
		n := off / UF2BlockSize
		blk := b[off : off+UF2BlockSize]
		if le.Uint32(blk[0:]) != UF2MagicStart0 || le.Uint32(blk[4:]) != UF2MagicStart1 || le.Uint32(blk[508:]) != UF2MagicEnd {
			return nil, fmt.Errorf("uf2: block %d: bad magic number", n)
		}
		u := UF2Block{
			Flags: le.Uint32(blk[8:]), Addr: le.Uint32(blk[12:]),
			BlockNo: le.Uint32(blk[20:]), NumBlocks: le.Uint32(blk[24:]), Family: le.Uint32(blk[28:]),
		}
		size := le.Uint32(blk[16:])
		if size > uf2DataMax {
			return nil, fmt.Errorf("uf2: block %d: payload %d bytes exceeds %d", n, size, uf2DataMax)
		}
		if u.BlockNo != uint32(n) {
			return nil, fmt.Errorf("uf2: block %d is numbered %d", n, u.BlockNo)
		}
		if n > 0 && (u.NumBlocks != out[0].NumBlocks || u.Family != out[0].Family) {
			return nil, fmt.Errorf("uf2: block %d: count %d family 0x%x differ from block 0", n, u.NumBlocks, u.Family)
		}
		u.Data = append([]byte(nil), blk[32:32+size]...)
		out = append(out, u)
	}
	if int(out[0].NumBlocks) != len(out) {
		return nil, fmt.Errorf("uf2: header says %d blocks, file has %d", out[0].NumBlocks, len(out))
	}
	return out, nil
}
