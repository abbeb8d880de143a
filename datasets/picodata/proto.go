package picodata

import (
	"errors"
	"fmt"
	"hash/crc32"
	"strconv"
	"strings"
)

// The serial line protocol, version 1 (firmware/proto.h is the C side):
//
//	PQ <seq> <kind> <key>=<value> ... *<crc>
//
// seq counts lines from 0 at each start of a run; crc is the CRC-32 (IEEE,
// hash/crc32.ChecksumIEEE) of everything before " *", 8 lower-case hex
// digits. Values contain no spaces. Kinds: start, m, v, err, fault, end, b.

// Line kinds.
const (
	KindStart   = "start"
	KindMeasure = "m"
	KindVector  = "v"
	KindError   = "err"
	KindFault   = "fault"
	KindEnd     = "end"
	// KindBegin announces a long operation before it starts.
	//
	// A SPHINCS+ signature takes minutes of emulation, so a run stopped
	// by its time limit can say which operation it was in. Its "m" line
	// ends it.
	KindBegin = "b"
)

// MaxLineLen bounds one protocol line; the firmware's buffer is 600 bytes.
const MaxLineLen = 4096

// Parse errors; test with errors.Is.
var (
	ErrNotProtocol = errors.New("not a protocol line")
	ErrChecksum    = errors.New("checksum mismatch")
	ErrSyntax      = errors.New("malformed protocol line")
)

// A Field is one key=value pair, in the order the firmware sent it.
type Field struct{ Key, Value string }

// A Line is one parsed, checksum-verified protocol line.
type Line struct {
	Seq    uint64
	Kind   string
	Fields []Field
}

// Get returns the value of key and whether it was present.
func (l Line) Get(key string) (string, bool) {
	for _, f := range l.Fields {
		if f.Key == key {
			return f.Value, true
		}
	}
	return "", false
}

// Uint returns key parsed as an unsigned decimal.
func (l Line) Uint(key string) (uint64, error) {
	v, ok := l.Get(key)
	if !ok {
		return 0, fmt.Errorf("%w: %s line %d has no %q", ErrSyntax, l.Kind, l.Seq, key)
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: %s=%q is not a number", ErrSyntax, key, v)
	}
	return n, nil
}

// FormatLine is the inverse of ParseLine; the tests and the fault injector
// use it to make lines exactly as the firmware does.
func FormatLine(seq uint64, kind string, fields ...Field) string {
	var b strings.Builder
	fmt.Fprintf(&b, "PQ %d %s", seq, kind)
	for _, f := range fields {
		b.WriteString(" " + f.Key + "=" + f.Value)
	}
	body := b.String()
	return fmt.Sprintf("%s *%08x", body, crc32.ChecksumIEEE([]byte(body)))
}

// ParseLine parses one line (without its newline; a trailing '\r' is
// allowed). A line that does not start with "PQ " is ErrNotProtocol (noise
// or another program's output); a protocol line with a bad checksum is
// ErrChecksum; anything else malformed is ErrSyntax.
func ParseLine(s string) (Line, error) {
	s = strings.TrimSuffix(s, "\r")
	if !strings.HasPrefix(s, "PQ ") {
		return Line{}, ErrNotProtocol
	}
	if len(s) > MaxLineLen {
		return Line{}, fmt.Errorf("%w: %d bytes is longer than %d", ErrSyntax, len(s), MaxLineLen)
	}
	star := strings.LastIndex(s, " *")
	if star < 0 || len(s)-star-2 != 8 {
		return Line{}, fmt.Errorf("%w: no ' *crc' trailer", ErrSyntax)
	}
	want, err := strconv.ParseUint(s[star+2:], 16, 32)
	if err != nil || strings.ToLower(s[star+2:]) != s[star+2:] {
		return Line{}, fmt.Errorf("%w: checksum %q is not 8 lower-case hex digits", ErrSyntax, s[star+2:])
	}
	body := s[:star]
	if got := crc32.ChecksumIEEE([]byte(body)); uint64(got) != want {
		return Line{}, fmt.Errorf("%w: line says %08x, content gives %08x", ErrChecksum, want, got)
	}
	parts := strings.Split(body, " ")
	if len(parts) < 3 {
		return Line{}, fmt.Errorf("%w: want 'PQ seq kind'", ErrSyntax)
	}
	seq, err := strconv.ParseUint(parts[1], 10, 64)
	if err != nil || (len(parts[1]) > 1 && parts[1][0] == '0') {
		return Line{}, fmt.Errorf("%w: sequence %q", ErrSyntax, parts[1])
	}
	l := Line{Seq: seq, Kind: parts[2]}
	if l.Kind == "" {
		return Line{}, fmt.Errorf("%w: empty kind", ErrSyntax)
	}
	for _, p := range parts[3:] {
		k, v, ok := strings.Cut(p, "=")
		if !ok || k == "" {
			return Line{}, fmt.Errorf("%w: field %q is not key=value", ErrSyntax, p)
		}
		l.Fields = append(l.Fields, Field{k, v})
	}
	return l, nil
}
