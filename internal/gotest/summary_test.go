package gotest

import (
	"bytes"
	"strings"
	"testing"
)

func TestSummarize(t *testing.T) {
	stream := strings.Join([]string{
		`{"Action":"start","Package":"p/a"}`,
		`{"Action":"run","Package":"p/a","Test":"TestOK"}`,
		`{"Action":"output","Package":"p/a","Test":"TestOK","Output":"=== RUN   TestOK\n"}`,
		`{"Action":"pass","Package":"p/a","Test":"TestOK"}`,
		`{"Action":"run","Package":"p/a","Test":"TestRoot"}`,
		`{"Action":"output","Package":"p/a","Test":"TestRoot","Output":"    a_test.go:9: needs root: run as root\n"}`,
		`{"Action":"output","Package":"p/a","Test":"TestRoot","Output":"--- SKIP: TestRoot (0.00s)\n"}`,
		`{"Action":"skip","Package":"p/a","Test":"TestRoot"}`,
		`{"Action":"run","Package":"p/a","Test":"TestBad"}`,
		`{"Action":"output","Package":"p/a","Test":"TestBad","Output":"    a_test.go:20: got 1, want 2\n"}`,
		`{"Action":"output","Package":"p/a","Test":"TestBad","Output":"--- FAIL: TestBad (0.00s)\n"}`,
		`{"Action":"fail","Package":"p/a","Test":"TestBad"}`,
		`{"Action":"output","Package":"p/a","Output":"FAIL\tp/a\t0.01s\n"}`,
		`{"Action":"fail","Package":"p/a"}`,
		`# p/b`,
		`b.go:1: syntax error`,
	}, "\n")
	var out bytes.Buffer
	sum, err := Summarize(strings.NewReader(stream), &out)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Passed != 1 || sum.Failed != 1 || sum.Skipped != 1 {
		t.Errorf("summary = %+v", sum)
	}
	got := out.String()
	for _, want := range []string{
		"a_test.go:20: got 1, want 2", "FAIL\tp/a\t0.01s", "b.go:1: syntax error",
		"SKIP p/a TestRoot: a_test.go:9: needs root: run as root",
		"1 passed, 1 failed, 1 skipped\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "=== RUN   TestOK") {
		t.Error("passing tests' output should not be printed")
	}
}

// TestSummarizeTimeout: a package that times out (go test's panic while
// a test runs) ends that test with no action of its own; it counts as a
// failure and its output, the panic, is printed.
func TestSummarizeTimeout(t *testing.T) {
	stream := strings.Join([]string{
		`{"Action":"run","Package":"p/a","Test":"TestOK"}`,
		`{"Action":"pass","Package":"p/a","Test":"TestOK"}`,
		`{"Action":"run","Package":"p/a","Test":"TestHangs"}`,
		`{"Action":"output","Package":"p/a","Test":"TestHangs","Output":"=== RUN   TestHangs\n"}`,
		`{"Action":"output","Package":"p/a","Test":"TestHangs","Output":"panic: test timed out after 10m0s\n"}`,
		`{"Action":"output","Package":"p/a","Output":"FAIL\tp/a\t600.1s\n"}`,
		`{"Action":"fail","Package":"p/a"}`,
	}, "\n")
	var out bytes.Buffer
	sum, err := Summarize(strings.NewReader(stream), &out)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Passed != 1 || sum.Failed != 1 {
		t.Errorf("summary = %+v, want 1 passed, 1 failed", sum)
	}
	for _, want := range []string{"--- FAIL: TestHangs (did not finish", "panic: test timed out after 10m0s", "1 passed, 1 failed, 0 skipped\n"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
