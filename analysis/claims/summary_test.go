package claims

import (
	"strings"
	"testing"
)

// TestSummaryLatex: the paper's one "what reproduced" table has a row per
// claim, marks derived claims and observations, prints p_Holm as a
// symbol, and calls a counted claim with a single specification
// untested, never robust.
func TestSummaryLatex(t *testing.T) {
	rep := Report{Claims: []Evaluated{
		{ID: "A1a", Study: "tls", Statement: "slower", Published: "higher", Ours: "+1.0 ms by round, p_Holm = 0.01", Verdict: Reproduced},
		{ID: "A1b", Study: "tls", Statement: "relative", Published: "+120 %", Ours: "+10 %", Verdict: NotReproduced, DerivedFrom: []string{"A1c"}},
		{ID: "A6", Study: "tls", Statement: "order", Published: "not stated", Ours: "x", Verdict: NotReproduced, Observation: "ours"},
		{ID: "B1", Study: "net", Statement: "every", Published: "9 of 9", Ours: "9 of 9", Verdict: Reproduced},
	}}
	rep.curves = &CurveReport{Curves: []Curve{
		{ID: "A1a", Label: Robust, K: 3, N: 3},
		{ID: "B1", Label: Robust, K: 1, N: 1},
	}}
	got := SummaryLatex(rep, map[string]string{"tls": "A", "net": "B"})
	for _, w := range []string{
		`\begin{longtable}`, `\label{tab:claims}`,
		`A1a & slower & higher & +1.0 ms by round, $p_{\mathrm{Holm}}$ = 0.01 & reproduced & robust \\`,
		`A1b {\footnotesize (derived)} &`, `A6 {\footnotesize (ours)} &`,
		`B1 & every & 9 of 9 & 9 of 9 & reproduced & untested \\`,
	} {
		if !strings.Contains(got, w) {
			t.Errorf("summary lacks %q:\n%s", w, got)
		}
	}
	if strings.Contains(got, `p\_Holm`) {
		t.Errorf("summary prints the identifier p_Holm:\n%s", got)
	}
}
