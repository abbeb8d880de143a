package dockernet

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// The image's layout: the program where the original's image had
// OpenSSL's, the idle process at the root.
const (
	ProgramPath = "/usr/local/bin/openssl"
	PausePath   = "/pause"
)

//go:embed pause/main.go
var pauseSource []byte

// imageFile is one regular file of the image: where it goes and where its
// bytes come from on this host.
type imageFile struct {
	name, src string
	mode      int64
}

// parseLdd returns the absolute paths of the shared objects in ldd's
// output, in order, without duplicates. A line "libc.so.6 => /lib/.../libc.so.6
// (0x...)" gives the path after "=>", "/lib64/ld-linux-x86-64.so.2
// (0x...)" the path itself; the vDSO (no file) and "not found" lines are
// skipped, the latter reported as an error (the program would not start
// in the container). A static program's "not a dynamic executable" or
// "statically linked" gives none.
func parseLdd(out string) ([]string, error) {
	var libs []string
	seen := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.Contains(line, "not a dynamic executable") || strings.Contains(line, "statically linked") {
			continue
		}
		if strings.Contains(line, "=> not found") {
			return nil, fmt.Errorf("ldd: %s: install the library or link the program statically", line)
		}
		p := line
		if _, after, ok := strings.Cut(line, "=>"); ok {
			p = strings.TrimSpace(after)
		}
		if i := strings.Index(p, " ("); i >= 0 {
			p = p[:i]
		} else if strings.HasPrefix(p, "(") {
			continue
		}
		p = strings.TrimSpace(p)
		if !strings.HasPrefix(p, "/") {
			continue // linux-vdso.so.1 and the like: no file
		}
		if !seen[p] {
			seen[p] = true
			libs = append(libs, p)
		}
	}
	return libs, sc.Err()
}

// sharedLibs runs ldd on prog. ldd exits 1 on a static program, which is
// fine: its output says so.
func sharedLibs(ctx context.Context, prog string) ([]string, error) {
	out, err := exec.CommandContext(ctx, "ldd", prog).CombinedOutput()
	if err != nil && !strings.Contains(string(out), "not a dynamic executable") {
		return nil, fmt.Errorf("ldd %s: %w: %s (ldd comes with libc-bin)", prog, err, strings.TrimSpace(string(out)))
	}
	return parseLdd(string(out))
}

// writeImageTar writes the image's root file system as a tar to w,
// byte-identical for the same files. Entries are sorted by name, parent
// directories first, owner root, times zero, mode 0755 (every file is a
// program or a shared object). A symbolic link on the host (the loader's
// /lib64 path) is stored as the file it points to. It returns the image's file
// names.
func writeImageTar(w io.Writer, files []imageFile) ([]string, error) {
	sort.Slice(files, func(i, j int) bool { return files[i].name < files[j].name })
	dirs := map[string]bool{}
	var names []string
	tw := tar.NewWriter(w)
	epoch := time.Unix(0, 0).UTC()
	for i, f := range files {
		if i > 0 && files[i-1].name == f.name {
			return nil, fmt.Errorf("image: %s listed twice", f.name)
		}
		var parents []string
		for d := path.Dir(f.name); d != "/" && !dirs[d]; d = path.Dir(d) {
			parents = append(parents, d)
		}
		for j := len(parents) - 1; j >= 0; j-- {
			dirs[parents[j]] = true
			if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: strings.TrimPrefix(parents[j], "/") + "/", Mode: 0o755, ModTime: epoch, Format: tar.FormatUSTAR}); err != nil {
				return nil, err
			}
		}
		b, err := os.ReadFile(f.src)
		if err != nil {
			return nil, fmt.Errorf("image: %w", err)
		}
		mode := f.mode
		if mode == 0 {
			mode = 0o755
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: strings.TrimPrefix(f.name, "/"), Mode: mode, Size: int64(len(b)), ModTime: epoch, Format: tar.FormatUSTAR}); err != nil {
			return nil, err
		}
		if _, err := tw.Write(b); err != nil {
			return nil, err
		}
		names = append(names, f.name)
	}
	return names, tw.Close()
}

// buildPause builds the idle process (pause/main.go, embedded) into cacheDir,
// named by the SHA-256 of its source and the Go version. It builds with
// CGO_ENABLED=0, so that it needs no library; a later Start reuses it.
func buildPause(ctx context.Context, goCmd, cacheDir string) (string, error) {
	ver, err := exec.CommandContext(ctx, goCmd, "env", "GOVERSION").Output()
	if err != nil {
		return "", fmt.Errorf("the idle process: go env GOVERSION: %w (Go must be on PATH)", err)
	}
	h := sha256.New()
	h.Write(pauseSource)
	h.Write(bytes.TrimSpace(ver))
	out := filepath.Join(cacheDir, "pause-"+hex.EncodeToString(h.Sum(nil))[:16])
	if _, err := os.Stat(out); err == nil {
		return out, nil
	}
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return "", fmt.Errorf("the idle process: %w", err)
	}
	src, err := os.MkdirTemp("", "pqrd-pause-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(src)
	if err := os.WriteFile(filepath.Join(src, "main.go"), pauseSource, 0o644); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(src, "go.mod"), []byte("module pause\n"), 0o644); err != nil {
		return "", err
	}
	tmp := out + ".tmp" + fmt.Sprint(os.Getpid())
	cmd := exec.CommandContext(ctx, goCmd, "build", "-trimpath", "-buildvcs=false", "-ldflags=-s -w", "-o", tmp, ".")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOWORK=off", "GOFLAGS=")
	if b, err := cmd.CombinedOutput(); err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("the idle process: go build: %w: %s", err, strings.TrimSpace(string(b)))
	}
	return out, os.Rename(tmp, out)
}

// imageFiles lists the image's files. They are the program, the shared objects
// ldd says it links (at the paths the loader looks for them) and the
// idle process.
func imageFiles(ctx context.Context, program, pause string) ([]imageFile, error) {
	if _, err := os.Stat(program); err != nil {
		return nil, fmt.Errorf("the image's program: %w", err)
	}
	libs, err := sharedLibs(ctx, program)
	if err != nil {
		return nil, err
	}
	files := []imageFile{{name: ProgramPath, src: program}, {name: PausePath, src: pause}}
	for _, l := range libs {
		files = append(files, imageFile{name: l, src: l})
	}
	return files, nil
}
