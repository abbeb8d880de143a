package paperbuild

import (
	"strings"
	"testing"
)

func TestCheckSources(t *testing.T) {
	files := map[string][]byte{
		"main.tex": []byte(`TLS~1.3 is fast. See Figure~\ref{fig:a}.
We measured 3.9~ms and 120\,\% by hand. % 5.5 in a comment is fine
\cite{x2020} and \texttt{v1.2.3} are names. \input{generated/t}`),
		"generated/t.tex": []byte(`\label{tab:never}\label{fig:a} 12.5 ms`),
		// Not in the paper yet (no source names it): its float needs no
		// reference.
		"generated/later.tex": []byte(`\label{tab:later}`),
	}
	got := strings.Join(CheckSources(files, []string{"1.3"}), "\n")
	for _, want := range []string{`"3.9~ms"`, `"120\\,\\%"`, "tab:never is never referenced"} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %s in:\n%s", want, got)
		}
	}
	for _, not := range []string{"1.3", "5.5", "1.2.3", "fig:a", "12.5", "tab:later"} {
		if strings.Contains(got, `"`+not) || strings.Contains(got, not+" is never") {
			t.Errorf("flagged %s:\n%s", not, got)
		}
	}
	// A study's allowance is the study's: without it, TLS 1.3 is typed
	// by hand.
	if got := strings.Join(CheckSources(files, nil), "\n"); !strings.Contains(got, `"1.3"`) {
		t.Errorf("1.3 allowed without a study allowing it:\n%s", got)
	}
}

// TestCheckSignWords: a sign word, typed or generated, must agree with
// the signs of its sentence's last generated number list; one with no
// list before it in its sentence is a problem, one in another sentence
// does not borrow the list.
func TestCheckSignWords(t *testing.T) {
	gen := []byte(`\newcommand{\Base}{1.121, 1.141, 1.165}
\newcommand{\Inc}{+0.091, +0.106, +0.195}
\newcommand{\Mixed}{+0.091, $-$0.106, 1{,}204}
\newcommand{\IncSign}{all positive}
\newcommand{\MixedSign}{changing sign}
`)
	for _, tc := range []struct {
		name, text string
		want       string // "" for no problem
	}{
		{"typed stale", `The base is \Base{}~ms and the increase \Inc{}~ms, changing sign (Table).`, `"changing sign" about \Inc, whose values [0.091 0.106 0.195] are all positive`},
		{"typed true", `The increase is \Inc{}~ms, all positive.`, ""},
		{"typed true, mixed", "The increase is \\Mixed{}~ms,\nchanging sign.", ""},
		{"typed wrong, mixed", `The increase is \Mixed{}~ms, all positive.`, `about \Mixed`},
		{"generated", `The increase is \Inc{}~ms, \IncSign{}.`, ""},
		{"generated wrong", `The increase is \Inc{}~ms, \MixedSign{}.`, `\MixedSign ("changing sign") about \Inc`},
		{"no subject", `The increases, all negative, are large.`, "no generated list before it"},
		{"other sentence", `The increase is \Mixed{}~ms. Later ones are all positive.`, "no generated list before it"},
	} {
		got := strings.Join(CheckSources(map[string][]byte{"generated/n.tex": gen, "sections/s.tex": []byte(tc.text)}, nil), "\n")
		if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}
