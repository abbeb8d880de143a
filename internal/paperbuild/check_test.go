package paperbuild

import (
	"strings"
	"testing"
)

func TestCheckSources(t *testing.T) {
	files := map[string][]byte{
		"main.tex": []byte(`TLS~1.3 is fast. See Figure~\ref{fig:a}.
We measured 3.9~ms and 120\,\% by hand. % 5.5 in a comment is fine
\cite{x2020} and \texttt{v1.2.3} are names.`),
		"generated/t.tex": []byte(`\label{tab:never}\label{fig:a} 12.5 ms`),
	}
	got := strings.Join(CheckSources(files, []string{"1.3"}), "\n")
	for _, want := range []string{`"3.9~ms"`, `"120\\,\\%"`, "tab:never is never referenced"} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %s in:\n%s", want, got)
		}
	}
	for _, not := range []string{"1.3", "5.5", "1.2.3", "fig:a", "12.5"} {
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
