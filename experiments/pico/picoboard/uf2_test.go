package picoboard

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"
)

// TestEncodeUF2Spec checks every field of every block against the UF2
// specification's block layout, independently of DecodeUF2.
func TestEncodeUF2Spec(t *testing.T) {
	data := make([]byte, 600)
	for i := range data {
		data[i] = byte(i * 7)
	}
	// Two segments: one crossing pages, one unaligned in a later page.
	b, err := EncodeUF2([]Segment{{0x20000000, data}, {0x20001010, []byte{1, 2, 3}}}, UF2FamilyRP2040)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != 4*512 {
		t.Fatalf("got %d bytes, want 4 blocks", len(b))
	}
	le := binary.LittleEndian
	wantAddr := []uint32{0x20000000, 0x20000100, 0x20000200, 0x20001000}
	for n := 0; n < 4; n++ {
		blk := b[n*512 : (n+1)*512]
		for off, want := range map[int]uint32{0: 0x0A324655, 4: 0x9E5D5157, 8: 0x2000, 12: wantAddr[n], 16: 256, 20: uint32(n), 24: 4, 28: 0xE48BFF56, 508: 0x0AB16F30} {
			if got := le.Uint32(blk[off:]); got != want {
				t.Errorf("block %d offset %d = 0x%x, want 0x%x", n, off, got, want)
			}
		}
		if !bytes.Equal(blk[32+256:508], make([]byte, 508-32-256)) {
			t.Errorf("block %d: padding after the payload is not zero", n)
		}
	}
	if !bytes.Equal(b[32:32+256], data[:256]) || !bytes.Equal(b[2*512+32:2*512+32+88], data[512:600]) {
		t.Error("payload bytes differ from the segment")
	}
	if got := b[3*512+32+0x10 : 3*512+32+0x13]; !bytes.Equal(got, []byte{1, 2, 3}) {
		t.Errorf("unaligned segment landed as %x", got)
	}
	blocks, err := DecodeUF2(b)
	if err != nil || len(blocks) != 4 || blocks[3].Addr != 0x20001000 {
		t.Fatalf("DecodeUF2 = %v, %v", blocks, err)
	}
}

func TestDecodeUF2Rejects(t *testing.T) {
	good, _ := EncodeUF2([]Segment{{0x20000000, make([]byte, 300)}}, UF2FamilyRP2040)
	mut := func(off int, v uint32) []byte {
		c := append([]byte(nil), good...)
		binary.LittleEndian.PutUint32(c[off:], v)
		return c
	}
	tests := []struct {
		name string
		in   []byte
		want string
	}{
		{"empty", nil, "multiple"},
		{"short", good[:511], "multiple"},
		{"magic0", mut(0, 1), "magic"},
		{"magic1", mut(4, 1), "magic"},
		{"end magic", mut(508, 1), "magic"},
		{"payload too big", mut(16, 477), "exceeds"},
		{"block number", mut(512+20, 5), "numbered"},
		{"block count", mut(24, 3), "differ"},
		{"count vs file", mut(512+24, 3), "differ"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := DecodeUF2(tc.in); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
	if _, err := EncodeUF2(nil, UF2FamilyRP2040); err == nil {
		t.Error("EncodeUF2(nil) succeeded")
	}
}

func FuzzDecodeUF2(f *testing.F) {
	good, _ := EncodeUF2([]Segment{{0x20000000, []byte("hello")}}, UF2FamilyRP2040)
	f.Add(good)
	f.Fuzz(func(t *testing.T, b []byte) {
		blocks, err := DecodeUF2(b)
		if err == nil && len(blocks)*512 != len(b) {
			t.Fatalf("%d blocks from %d bytes", len(blocks), len(b))
		}
	})
}
