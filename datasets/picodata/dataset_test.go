package picodata

import "testing"

// TestHeaderUID: an optional uid= field of the start line is the board's
// ID; a start line without one (today's firmware) leaves it empty.
func TestHeaderUID(t *testing.T) {
	base := []Field{{"proto", "1"}, {"run", "0"}, {"img", "1"}, {"clk", "133000000"}, {"seed", "1"}, {"stackcap", "1"}, {"heapcap", "1"}}
	for _, c := range []struct {
		extra []Field
		want  string
	}{
		{nil, ""},
		{[]Field{{"uid", "e6614103e73f2c2a"}}, "e6614103e73f2c2a"},
	} {
		l, err := ParseLine(FormatLine(0, KindStart, append(base, c.extra...)...))
		if err != nil {
			t.Fatal(err)
		}
		h, err := parseHeader(l)
		if err != nil || h.UID != c.want {
			t.Errorf("uid %q (%v), want %q", h.UID, err, c.want)
		}
	}
}
