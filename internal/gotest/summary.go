// Package gotest runs a module's checks the way `mage test` does and
// reports them for people. That is, go vet, then `go test -json`
// summarised (the package lines, every failed test in full, every
// skipped test with its reason, and "N passed, N failed, N skipped"),
// and before them the bounded fuzz runs listed in fuzz.txt files. It
// knows no study.
package gotest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
)

// testEvent is one line of `go test -json` (cmd/test2json).
type testEvent struct {
	Action  string
	Package string
	Test    string
	Output  string
}

// Summary counts what a `go test -json` stream reported.
type Summary struct {
	Passed, Failed, Skipped int
	// Skips lists every skipped test with the reason it gave.
	Skips []string
}

// Summarize reads a `go test -json` stream and writes what a person
// needs. That is, the package lines as go test prints them (ok, FAIL,
// no test files, build errors), the full output of every failed test,
// and one line per skipped test with its reason, so that no test is
// skipped silently. It ends with the plain closing line "N passed, N
// failed, N skipped".
func Summarize(r io.Reader, w io.Writer) (Summary, error) {
	var sum Summary
	type key struct{ pkg, test string }
	buf := map[key][]string{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var ev testEvent
		if err := json.Unmarshal(line, &ev); err != nil || ev.Action == "" {
			// Not an event (for example a build error printed by go
			// itself): pass it through.
			fmt.Fprintf(w, "%s\n", line)
			continue
		}
		k := key{ev.Package, ev.Test}
		switch ev.Action {
		case "output":
			if ev.Test == "" {
				if ev.Output != "PASS\n" { // the "ok" line follows
					fmt.Fprint(w, ev.Output)
				}
				continue
			}
			buf[k] = append(buf[k], ev.Output)
		case "pass":
			if ev.Test != "" {
				sum.Passed++
			}
			delete(buf, k)
		case "fail":
			if ev.Test != "" {
				sum.Failed++
				fmt.Fprint(w, strings.Join(buf[k], ""))
			} else {
				// The package failed with tests still running (a timeout
				// panic or a crash: test2json then ends those tests with
				// no action of their own): each is a failure, with its
				// output, which holds the panic and the goroutines.
				var open []key
				for o := range buf {
					if o.pkg == ev.Package && o.test != "" {
						open = append(open, o)
					}
				}
				slices.SortFunc(open, func(a, b key) int { return strings.Compare(a.test, b.test) })
				for _, o := range open {
					sum.Failed++
					fmt.Fprintf(w, "--- FAIL: %s (did not finish: the package %s failed, by a timeout or a crash)\n", o.test, o.pkg)
					fmt.Fprint(w, strings.Join(buf[o], ""))
					delete(buf, o)
				}
			}
			delete(buf, k)
		case "skip":
			if ev.Test != "" {
				sum.Skipped++
				reason := skipReason(buf[k])
				s := fmt.Sprintf("%s %s: %s", ev.Package, ev.Test, reason)
				sum.Skips = append(sum.Skips, s)
			}
			delete(buf, k)
		}
	}
	if err := sc.Err(); err != nil {
		return sum, fmt.Errorf("read go test output: %w", err)
	}
	slices.Sort(sum.Skips)
	if len(sum.Skips) > 0 {
		fmt.Fprintf(w, "skipped tests and why:\n")
		for _, s := range sum.Skips {
			fmt.Fprintf(w, "  SKIP %s\n", s)
		}
	}
	fmt.Fprintf(w, "%d passed, %d failed, %d skipped\n", sum.Passed, sum.Failed, sum.Skipped)
	return sum, nil
}

// skipReason extracts the message of t.Skip from a test's output lines
// ("    file_test.go:12: reason" before "--- SKIP: ...").
func skipReason(lines []string) string {
	var msgs []string
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- SKIP") {
			continue
		}
		msgs = append(msgs, t)
	}
	if len(msgs) == 0 {
		return "(no reason given)"
	}
	return strings.Join(msgs, " / ")
}
