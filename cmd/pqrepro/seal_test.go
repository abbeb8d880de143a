package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSealCommand(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "go.mod"), []byte("module x\n"), 0o644)
	os.WriteFile(filepath.Join(root, "SHA256SUMS"), nil, 0o644)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"seal"}, 2, "usage: pqrepro seal"},
		{[]string{"seal", "-root", root, "results"}, 1, `"results" is not a run folder`},
		{[]string{"seal", "-root", root, "data/tls/20261130T120000Z-quick"}, 1, "manifest of tls/20261130T120000Z-quick"},
	} {
		var out, errb bytes.Buffer
		if code := dispatch(tc.args, &out, &errb); code != tc.code || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, code, errb.String(), tc.code, tc.want)
		}
	}
}
