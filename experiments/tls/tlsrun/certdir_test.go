package tlsrun

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestCertLeftovers: a PEM folder of a live run is not a leftover; one of
// a dead PID, or one named before folders carried their PID, is, and
// RemoveCertLeftovers removes exactly those.
func TestCertLeftovers(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	mine, err := makeCertDir()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(filepath.Base(mine), certDirPrefix+strconv.Itoa(os.Getpid())+"-") {
		t.Errorf("folder %s is not named after this process", mine)
	}
	// A PID that has exited: a child that ran and was waited for.
	c := exec.Command("true")
	if err := c.Run(); err != nil {
		t.Fatal(err)
	}
	dead := filepath.Join(os.TempDir(), certDirPrefix+strconv.Itoa(c.Process.Pid)+"-123")
	legacy := filepath.Join(os.TempDir(), certDirPrefix+"456789")
	other := filepath.Join(os.TempDir(), "pqrepro-other-1")
	for _, d := range []string{dead, legacy, other} {
		if err := os.MkdirAll(filepath.Join(d, "x"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	left := CertLeftovers()
	slices.Sort(left)
	want := []string{dead, legacy}
	slices.Sort(want)
	if !slices.Equal(left, want) {
		t.Errorf("leftovers %v, want %v", left, want)
	}
	gone, err := RemoveCertLeftovers()
	if err != nil || len(gone) != 2 {
		t.Fatalf("removed %v, %v", gone, err)
	}
	for _, d := range []string{mine, other} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s removed: %v", d, err)
		}
	}
	for _, d := range want {
		if _, err := os.Stat(d); err == nil {
			t.Errorf("%s still there", d)
		}
	}
}
