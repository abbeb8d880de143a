package picoboard

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestImages(t *testing.T) {
	all, err := Images("/repo", "full", nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != len(StandardImages()) {
		t.Fatalf("%d images, want every standard image (%d)", len(all), len(StandardImages()))
	}
	for _, c := range all {
		if c.Root != "/repo" || c.Profile != FullProfile || c.Log != io.Discard {
			t.Errorf("image %s: root %q, profile %+v", c.Name, c.Root, c.Profile)
		}
	}
	some, err := Images("", "quick", []string{"mldsa44", "no-such-image"}, nil)
	if err != nil || len(some) != 1 || some[0].Name != "mldsa44" || some[0].Profile != QuickProfile {
		t.Errorf("named images: %+v, %v", some, err)
	}
	if _, err := Images("", "medium", nil, nil); err == nil {
		t.Error("an unknown profile was accepted")
	}
}

func TestFlashUF2(t *testing.T) {
	drive, uf2 := fakeDrive(t), writeUF2(t)
	var out bytes.Buffer
	if err := FlashUF2(uf2, drive, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "copied "+uf2+" to "+drive) {
		t.Errorf("output %q", out.String())
	}
	if err := FlashUF2(filepath.Join(t.TempDir(), "missing.uf2"), drive, &out); err == nil {
		t.Error("a missing UF2 was flashed")
	}
}

func TestReadBoardNoPort(t *testing.T) {
	dir := t.TempDir()
	if err := ReadBoard(context.Background(), filepath.Join(dir, "no-such-tty"), dir, time.Second); err == nil {
		t.Error("reading a port that does not exist succeeded")
	}
}
