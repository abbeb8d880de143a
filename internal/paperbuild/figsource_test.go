package paperbuild

import "testing"

func TestMacroWords(t *testing.T) {
	for in, want := range map[string]string{"tls-ths": "TlsThs", "pico-mldsa-sign": "PicoMldsaSign", "net-rtt2": "NetRttTwo", "net-diff-vs-rtt": "NetDiffVsRtt"} {
		if got := macroWords(in); got != want {
			t.Errorf("macroWords(%q) = %q, want %q", in, got, want)
		}
	}
}
