package sshhost

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// GOARCH maps `uname -m` to Go's architecture names; "" when unknown.
func GOARCH(unameM string) string {
	switch strings.TrimSpace(unameM) {
	case "x86_64", "amd64":
		return "amd64"
	case "aarch64", "arm64":
		return "arm64"
	case "armv7l", "armv6l":
		return "arm"
	case "riscv64":
		return "riscv64"
	case "i686", "i386":
		return "386"
	}
	return ""
}

// Arch asks the host for its machine architecture as Go names it.
func (h *Host) Arch(ctx context.Context) (string, error) {
	out, err := h.Run(ctx, "uname -m", nil)
	if err != nil {
		return "", err
	}
	a := GOARCH(string(out))
	if a == "" {
		return "", fmt.Errorf("ssh %s: unknown machine %q: no Go build for it", h.opt.Dest, strings.TrimSpace(string(out)))
	}
	return a, nil
}

// BuildBinary builds the static pqrepro binary (CGO_ENABLED=0, GOOS=linux,
// -trimpath) for goarch from the module at root into
// root/.cache/sshhost/pqrepro-linux-<goarch> and returns its path. The go
// command's build cache makes a rebuild of an unchanged tree fast. The
// binary is built under a temporary name and renamed into place, so a
// concurrent run never reads a half-written one.
func BuildBinary(ctx context.Context, root, goarch string) (string, error) {
	out, err := filepath.Abs(filepath.Join(root, ".cache", "sshhost", "pqrepro-linux-"+goarch))
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return "", fmt.Errorf("build pqrepro for the remote host: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(out), ".pqrepro-build-*")
	if err != nil {
		return "", fmt.Errorf("build pqrepro for the remote host: %w", err)
	}
	tmp.Close()
	defer os.Remove(tmp.Name())
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", tmp.Name(), "./cmd/pqrepro")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+goarch)
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build pqrepro for the remote host (GOARCH=%s): %w\n%s", goarch, err, b)
	}
	if err := os.Rename(tmp.Name(), out); err != nil {
		return "", fmt.Errorf("build pqrepro for the remote host: %w", err)
	}
	return out, nil
}

// Deployed is a binary on the host.
type Deployed struct {
	Path   string `json:"path"`   // on the host, as the remote shell resolves it
	SHA256 string `json:"sha256"` // hex, checked on the host
	Copied bool   `json:"copied"` // false: an identical file was already there
	Bytes  int64  `json:"bytes"`
}

// Deploy copies the local file bin to the host, named after its
// SHA-256.
//
// The copy is Dir/<name>-<first 16 hex of its SHA-256> (name "":
// "pqrepro") unless a file with that SHA-256 is already there. The copy
// goes to a temporary name, is hashed on the host with sha256sum, and
// renamed into place only when the sum matches; a failed copy (a full
// disk: ErrDiskFull) leaves no file behind.
func (h *Host) Deploy(ctx context.Context, bin, name string) (Deployed, error) {
	if name == "" {
		name = "pqrepro"
	}
	b, err := os.ReadFile(bin)
	if err != nil {
		return Deployed{}, fmt.Errorf("deploy: %w", err)
	}
	s := sha256.Sum256(b)
	sum := hex.EncodeToString(s[:])
	d := Deployed{Path: h.opt.Dir + "/" + name + "-" + sum[:16], SHA256: sum, Bytes: int64(len(b))}
	f := shq(d.Path)
	check := fmt.Sprintf(`f=%s; [ -x "$f" ] && [ "$(sha256sum < "$f" | cut -d' ' -f1)" = %s ] && echo present || echo absent`, f, sum)
	out, err := h.Run(ctx, check, nil)
	if err != nil {
		return d, fmt.Errorf("deploy to %s: %w", h.opt.Dest, err)
	}
	if strings.TrimSpace(string(out)) == "present" {
		return d, nil
	}
	cp := fmt.Sprintf(`set -e; umask 022; mkdir -p %s; f=%s; t="$f.tmp.$$"; trap 'rm -f "$t"' EXIT; cat > "$t"; `+
		`s=$(sha256sum < "$t" | cut -d' ' -f1); if [ "$s" != %s ]; then echo "sha256 of the copy is $s, not %s" >&2; exit 3; fi; `+
		`chmod 755 "$t"; mv -f "$t" "$f"; trap - EXIT; echo copied`, shq(h.opt.Dir), f, sum, sum)
	if _, err := h.Run(ctx, cp, b); err != nil {
		return d, fmt.Errorf("deploy %s to %s:%s: %w", filepath.Base(bin), h.opt.Dest, d.Path, err)
	}
	d.Copied = true
	return d, nil
}
