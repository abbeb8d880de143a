package picoboard

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"pqrepro/internal/atomicfile"
)

// Install hints, printed when a tool or source is missing.
const (
	hintGCC  = "install the toolchain: apt-get install -y gcc-arm-none-eabi libnewlib-arm-none-eabi"
	hintNode = "install Node.js and npm: apt-get install -y nodejs npm"
)

// npmInstall installs the package.json + package-lock.json in srcDir into
// cacheDir with 'npm ci --ignore-scripts', unless the lock file there is
// already the same. No install scripts run: PQClean's would compile a Node
// addon we do not need. It returns cacheDir/node_modules.
func npmInstall(ctx context.Context, srcDir, cacheDir string, log io.Writer) (string, error) {
	lock, err := os.ReadFile(filepath.Join(srcDir, "package-lock.json"))
	if err != nil {
		return "", fmt.Errorf("read npm lock file: %w", err)
	}
	pkg, err := os.ReadFile(filepath.Join(srcDir, "package.json"))
	if err != nil {
		return "", fmt.Errorf("read package.json: %w", err)
	}
	mods := filepath.Join(cacheDir, "node_modules")
	stamp := filepath.Join(cacheDir, ".installed-lock")
	if old, err := os.ReadFile(stamp); err == nil && bytes.Equal(old, lock) {
		if _, err := os.Stat(mods); err == nil {
			return mods, nil
		}
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return "", fmt.Errorf("npm not found: %s", hintNode)
	}
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return "", fmt.Errorf("create %s: %w", cacheDir, err)
	}
	for name, b := range map[string][]byte{"package.json": pkg, "package-lock.json": lock} {
		if err := atomicfile.WriteFile(filepath.Join(cacheDir, name), b, 0o644); err != nil {
			return "", err
		}
	}
	if log != nil {
		fmt.Fprintf(log, "pico: npm ci --ignore-scripts in %s\n", cacheDir)
	}
	cmd := exec.CommandContext(ctx, npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = cacheDir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("npm ci in %s: %w\n%s", cacheDir, err, out.String())
	}
	if err := atomicfile.WriteFile(stamp, lock, 0o644); err != nil {
		return "", err
	}
	return mods, nil
}

// EnsurePQClean installs the pinned pqclean npm package (sources only) and
// returns the PQClean source root (deps/PQClean inside the package).
func EnsurePQClean(ctx context.Context, root string, log io.Writer) (string, error) {
	mods, err := npmInstall(ctx, filepath.Join(root, "experiments/pico/firmware/deps"), filepath.Join(root, ".cache/pico/npm-fw"), log)
	if err != nil {
		return "", fmt.Errorf("fetch PQClean: %w", err)
	}
	dir := filepath.Join(mods, "pqclean/deps/PQClean")
	if _, err := os.Stat(filepath.Join(dir, "common/fips202.c")); err != nil {
		return "", fmt.Errorf("PQClean sources missing in %s (delete .cache/pico/npm-fw and retry): %w", dir, err)
	}
	return dir, nil
}

// EnsureEmulator installs the pinned rp2040js and returns its node_modules.
func EnsureEmulator(ctx context.Context, root string, log io.Writer) (string, error) {
	mods, err := npmInstall(ctx, filepath.Join(root, "experiments/pico/emulator"), filepath.Join(root, ".cache/pico/npm-emu"), log)
	if err != nil {
		return "", fmt.Errorf("fetch rp2040js: %w", err)
	}
	return mods, nil
}

// hashTree returns the SHA-256 over the sorted relative paths and contents
// of the files under dir whose names end in one of exts. It is
// the provenance hash of a source tree recorded in meta.json.
func hashTree(dir string, exts ...string) (string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		for _, e := range exts {
			if strings.HasSuffix(p, e) {
				files = append(files, p)
				break
			}
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("hash %s: %w", dir, err)
	}
	sort.Strings(files)
	h := sha256.New()
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", fmt.Errorf("hash %s: %w", f, err)
		}
		rel, _ := filepath.Rel(dir, f)
		fmt.Fprintf(h, "%s\x00%d\x00", filepath.ToSlash(rel), len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// SourcesFetched reports whether root's cache holds the firmware's and the
// emulator's pinned sources, which a fresh machine fetches once. They are
// PQClean and rp2040js from npm and Debian's mbedTLS source package.
func SourcesFetched(root string) bool {
	for _, dir := range []string{".cache/pico/npm-fw/node_modules", ".cache/pico/npm-emu/node_modules"} {
		if _, err := os.Stat(filepath.Join(root, dir)); err != nil {
			return false
		}
	}
	_, err := MbedTLSProvenance(root)
	return err == nil
}

// FetchEstimate is the expected time of fetching what SourcesFetched looks
// for. The two npm ci took 3 s and 8 s here (2026-12-04, npm's own cache
// warm), apt-get source of mbedTLS a few seconds; 30 s leaves room for a
// cold npm cache.
const FetchEstimate = 30 * time.Second
