package openssl

import (
	"context"
	_ "embed"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

//go:embed harness/pqssl.c
var harnessSource []byte

// HarnessSHA256 is the SHA-256 of the harness's C source, recorded in
// meta.json.
func HarnessSHA256() string { return sha256hex(harnessSource) }

// harnessFlags are gcc's flags; they are part of the binary's cache key.
var harnessFlags = []string{"-O2", "-Wall", "-Werror", "-std=gnu11"}

// Harness compiles harness/pqssl.c against the build's static libraries
// and returns the binary's path.
//
// It compiles once per source and flags; the binary is cached beside the
// build and written by rename, so a half-written one is never run.
func (b *Build) Harness(ctx context.Context, log io.Writer) (string, error) {
	key := sha256hex(append(append([]byte(nil), harnessSource...), []byte(fmt.Sprint(harnessFlags))...))[:16]
	dir := filepath.Join(filepath.Dir(b.Dir), "harness-"+key)
	bin := filepath.Join(dir, "pqssl")
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	if _, err := execLook("gcc"); err != nil {
		return "", fmt.Errorf("compile the OpenSSL harness: gcc not found (apt-get install -y gcc): %w", err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(b.Dir), ".harness-*")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	src := filepath.Join(tmp, "pqssl.c")
	if err := os.WriteFile(src, harnessSource, 0o644); err != nil {
		return "", err
	}
	args := append(append([]string(nil), harnessFlags...), "-I", filepath.Join(b.Dir, "include"), "-o", filepath.Join(tmp, "pqssl"), src,
		filepath.Join(b.Dir, "libssl.a"), filepath.Join(b.Dir, "libcrypto.a"), "-lpthread", "-ldl")
	logf(log, "gcc harness/pqssl.c against %s", b.Dir)
	if out, err := execRun(ctx, tmp, "gcc", args...); err != nil {
		return "", fmt.Errorf("compile the OpenSSL harness: gcc: %w\n%s", err, trunc(out))
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, dir); err != nil && !os.IsExist(err) {
		if _, serr := os.Stat(bin); serr != nil { // not a concurrent compile that won
			return "", fmt.Errorf("compile the OpenSSL harness: %w", err)
		}
	}
	return bin, nil
}
