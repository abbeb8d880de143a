package picodata

import (
	"errors"
	"fmt"
	"hash/crc32"
	"strings"
	"testing"
)

func TestParseLine(t *testing.T) {
	good := FormatLine(7, "m", Field{"scheme", "ml-kem-512"}, Field{"op", "keygen"}, Field{"us", "8967"})
	tests := []struct {
		name string
		line string
		want error
	}{
		{"good", good, nil},
		{"good with CR", good + "\r", nil},
		{"firmware line", "PQ 2 m scheme=ml-kem-512 op=keygen i=0 us=8967 cyc=1192721 stack=6200 heap=208 ok=1 *06c0d177", nil},
		{"noise", "hello world", ErrNotProtocol},
		{"empty", "", ErrNotProtocol},
		{"flipped payload", strings.Replace(good, "8967", "8968", 1), ErrChecksum},
		{"truncated", good[:len(good)-3], ErrSyntax},
		{"no trailer", "PQ 1 m a=b", ErrSyntax},
		{"upper-case crc", good[:len(good)-8] + strings.ToUpper(good[len(good)-8:]), ErrSyntax},
		{"bad field", FormatLine(1, "m", Field{"", "x"}), ErrSyntax},
		{"leading zero seq", fixCRC("PQ 01 m a=b"), ErrSyntax},
		{"no kind", fixCRC("PQ 1"), ErrSyntax},
		{"negative seq", fixCRC("PQ -1 m"), ErrSyntax},
		{"too long", fixCRC("PQ 1 v hex=" + strings.Repeat("a", MaxLineLen)), ErrSyntax},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, err := ParseLine(tc.line)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("ParseLine(%q) = %v", tc.line, err)
				}
				if l.Kind != "m" {
					t.Errorf("kind %q", l.Kind)
				}
				return
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("ParseLine(%q) error %v, want %v", tc.line, err, tc.want)
			}
		})
	}
}

func fixCRC(body string) string {
	return fmt.Sprintf("%s *%08x", body, crc(body))
}

func TestFormatParseRoundTrip(t *testing.T) {
	fields := []Field{{"a", "1"}, {"b", "x,y"}, {"hex", "00ff"}}
	l, err := ParseLine(FormatLine(123, "v", fields...))
	if err != nil {
		t.Fatal(err)
	}
	if l.Seq != 123 || l.Kind != "v" || len(l.Fields) != 3 || l.Fields[1] != fields[1] {
		t.Fatalf("round trip gave %+v", l)
	}
	if n, err := l.Uint("a"); err != nil || n != 1 {
		t.Errorf("Uint(a) = %d, %v", n, err)
	}
	if _, err := l.Uint("missing"); !errors.Is(err, ErrSyntax) {
		t.Errorf("Uint(missing) = %v", err)
	}
}

// FuzzParseLine: the parser never panics, and whatever it accepts
// re-formats to the same line.
func FuzzParseLine(f *testing.F) {
	f.Add("PQ 2 m scheme=ml-kem-512 op=keygen i=0 us=8967 cyc=1192721 stack=6200 heap=208 ok=1 *06c0d177")
	f.Add(FormatLine(0, "start", Field{"proto", "1"}))
	f.Add("PQ 1 m *00000000")
	f.Add("garbage\x00\xff")
	f.Fuzz(func(t *testing.T, s string) {
		l, err := ParseLine(s)
		if err != nil {
			return
		}
		again := FormatLine(l.Seq, l.Kind, l.Fields...)
		if strings.TrimSuffix(s, "\r") != again {
			t.Fatalf("accepted %q but it formats back as %q", s, again)
		}
	})
}

func crc(s string) uint32 {
	return crc32.ChecksumIEEE([]byte(s))
}
