package capture

import (
	"encoding/binary"
	"io"
)

// WriteDSB writes a pcapng Decryption Secrets Block holding an NSS key
// log, so that Wireshark decrypts the file.
//
// The block is little-endian (draft-ietf-opsawg-pcapng, section 4.7) and
// holds the key log (secrets type 0x544c534b "TLSK"), so that Wireshark
// and tshark decrypt the TLS sessions of the file without a separate key
// log:
//
//	block type 0x0000000A | total length | secrets type | secrets length |
//	secrets, zero-padded to 4 bytes | total length
//
// gopacket's NgWriter has no DSB support. Call NgWriter.Flush before
// writing to the same underlying writer.
func WriteDSB(w io.Writer, keyLog []byte) error {
	pad := (4 - len(keyLog)%4) % 4
	total := 20 + len(keyLog) + pad
	b := make([]byte, 0, total)
	b = binary.LittleEndian.AppendUint32(b, ngDSB)
	b = binary.LittleEndian.AppendUint32(b, uint32(total))
	b = binary.LittleEndian.AppendUint32(b, dsbTLSKeyLog)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(keyLog)))
	b = append(b, keyLog...)
	b = append(b, make([]byte, pad)...)
	b = binary.LittleEndian.AppendUint32(b, uint32(total))
	_, err := w.Write(b)
	return err
}
