package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTLSRunCommandNoCapture(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "experiments"), 0o755)
	good, err := os.ReadFile("../../experiments/tls.toml")
	if err != nil {
		t.Fatal(err)
	}
	spec := filepath.Join(root, "experiments", "tls.toml")
	os.WriteFile(spec, good, 0o644)
	for _, tc := range []struct {
		args     []string
		code     int
		out, err string
	}{
		{[]string{"-root", root, "-estimate", "-profile", "quick"}, 0, "quick: estimated", ""},
		{[]string{"-root", root, "-estimate", "-profile", "full"}, 0, "full: estimated", ""},
		{[]string{"-root", root, "-estimate", "-profile", "medium"}, 2, "", `unknown profile "medium"`},
		{[]string{"-root", root, "-profile", "medium"}, 1, "", `unknown profile "medium"`},
		{[]string{"-nosuchflag"}, 2, "", "flag provided but not defined"},
		{[]string{"extra"}, 2, "", "usage: pqrepro tlsrun"},
		{[]string{"-h"}, 0, "", "usage: pqrepro tlsrun"},
	} {
		var out, errb bytes.Buffer
		code := runTLSRun(tc.args, &out, &errb)
		if code != tc.code || !strings.Contains(out.String(), tc.out) || !strings.Contains(errb.String(), tc.err) {
			t.Errorf("tlsrun %v = %d\nstdout %s\nstderr %s", tc.args, code, out.String(), errb.String())
		}
	}
	// The quick profile's first key, misspelt (whatever its value).
	bad := bytes.Replace(good, []byte("\nwarmup = "), []byte("\nwarmups = "), 1)
	if bytes.Equal(bad, good) {
		t.Fatal("experiments/tls.toml has no `warmup = ` line to misspell: update this test")
	}
	os.WriteFile(spec, bad, 0o644)
	var out, errb bytes.Buffer
	if code := runTLSRun([]string{"-root", root}, &out, &errb); code != 1 || !strings.Contains(errb.String(), "profiles.quick.warmups") {
		t.Errorf("misspelt spec key: %d %s", code, errb.String())
	}
	if ents, _ := os.ReadDir(root); len(ents) != 1 {
		t.Errorf("a failed tlsrun created files: %v", ents)
	}
}
