package openssl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"time"

	"pqrepro/internal/deps"
)

// ConfigureArgs is the Configure line of the build. That is, static
// libraries only (the harness and the openssl program link them in, so
// the host's libssl never matters), without the test suite and the
// manuals. MakeTarget builds libssl.a, libcrypto.a and the openssl
// command-line program (apps/openssl) that the openssl-cli stack runs as
// s_server and s_client.
var ConfigureArgs = []string{"linux-x86_64", "no-shared", "no-tests", "no-docs"}

// MakeTarget is the make target of the build.
const MakeTarget = "build_programs"

const stampName = ".pqrepro-build.json"

// Build is a complete OpenSSL build in the cache and what meta.json
// records about it.
type Build struct {
	// Dir is the built source tree: libssl.a, libcrypto.a, include/ and
	// apps/openssl (Program).
	Dir       string `json:"-"`
	Package   string `json:"package"`
	Version   string `json:"version"` // Debian source version
	Suite     string `json:"suite"`
	DscSHA256 string `json:"dsc_sha256"`
	// Configure is the exact Configure line, MakeTarget the make target.
	Configure  string `json:"configure"`
	MakeTarget string `json:"make_target"`
	// OpenSSLVersion is OPENSSL_FULL_VERSION_STR of the built headers,
	// e.g. "3.5.7".
	OpenSSLVersion string `json:"openssl_version"`
	// BuildSeconds is how long Configure and make took, once.
	BuildSeconds float64 `json:"build_seconds"`
}

// ProgramPath is the openssl command-line program in the built tree.
const ProgramPath = "apps/openssl"

// Program is the path of the build's openssl program (s_server, s_client,
// speed, info), statically linked against the build's libraries.
func (b *Build) Program() string { return filepath.Join(b.Dir, ProgramPath) }

// Meta returns the build's provenance as meta.json tool keys.
func (b *Build) Meta() map[string]string {
	return map[string]string{
		"openssl.package":     b.Package + " " + b.Version + " (Debian " + b.Suite + " source package, apt-get source)",
		"openssl.version":     b.OpenSSLVersion,
		"openssl.dsc_sha256":  b.DscSHA256,
		"openssl.configure":   b.Configure,
		"openssl.make_target": b.MakeTarget,
	}
}

// configureLine is the Configure command as recorded.
func configureLine() string { return "./Configure " + strings.Join(ConfigureArgs, " ") }

// buildKey names the cache folder. It covers the source (its pinned .dsc sum)
// and how it is built, so a change to either builds anew beside the old one.
func buildKey(p pin) string {
	return sha256hex([]byte(p.dscSHA + "\n" + configureLine() + "\nmake " + MakeTarget + "\n"))[:16]
}

// pin is the source package a build is made from: the pinned constants,
// or a fake one in tests.
type pin struct{ version, dscFile, dscSHA string }

var pinned = pin{Version, DscFile, DscSHA256}

// CacheDir is where builds live below the repository root (git-ignored).
func CacheDir(root string) string { return filepath.Join(root, ".cache", "openssl") }

func buildDir(root string, p pin) string {
	return filepath.Join(CacheDir(root), strings.ReplaceAll(p.version, "~", "_")+"-"+buildKey(p))
}

// env is what Ensure uses from the system; tests replace it.
type env struct {
	pin           pin
	systemSources string // the system's deb822 Debian sources
	run           runFunc
	// build runs Configure and make in src, writing its output to log.
	build func(ctx context.Context, src string, log io.Writer) error
}

var systemEnv = env{
	pin:           pinned,
	systemSources: "/etc/apt/sources.list.d/debian.sources",
	run:           execRun,
	build:         makeBuild,
}

// makeBuild is the real build: perl Configure, then make with one job
// per CPU.
func makeBuild(ctx context.Context, src string, log io.Writer) error {
	for _, tool := range []string{"perl", "make", "gcc"} {
		if _, err := execLook(tool); err != nil {
			return fmt.Errorf("%s not found (apt-get install -y perl make gcc): %w", tool, err)
		}
	}
	steps := [][]string{
		append([]string{"perl", "./Configure"}, ConfigureArgs...),
		{"make", fmt.Sprintf("-j%d", runtime.NumCPU()), MakeTarget},
	}
	for _, s := range steps {
		if err := runLogged(ctx, src, log, s[0], s[1:]...); err != nil {
			return err
		}
	}
	return nil
}

// Cached returns the pinned build when it is complete in the cache, and
// an error saying how to make it otherwise. It never builds.
func Cached(root string) (*Build, error) { return cached(root, pinned) }

func cached(root string, p pin) (*Build, error) {
	dir := buildDir(root, p)
	raw, err := os.ReadFile(filepath.Join(dir, stampName))
	if err != nil {
		return nil, fmt.Errorf("OpenSSL %s is not built in %s (go run mage.go tls:openssl builds it, about 6-10 minutes on 2 cores): %w", Version, dir, err)
	}
	var b Build
	if err := json.Unmarshal(raw, &b); err != nil {
		return nil, fmt.Errorf("read %s: %w (delete %s and build again)", filepath.Join(dir, stampName), err, dir)
	}
	if b.Version != p.version || b.DscSHA256 != p.dscSHA || b.Configure != configureLine() || b.MakeTarget != MakeTarget {
		return nil, fmt.Errorf("%s records %s %s %q, not the pinned build; delete %s and build again", filepath.Join(dir, stampName), b.Version, b.DscSHA256, b.Configure, dir)
	}
	b.Dir = filepath.Join(dir, "src")
	for _, f := range []string{"libssl.a", "libcrypto.a", "include/openssl/ssl.h", ProgramPath} {
		if _, err := os.Stat(filepath.Join(b.Dir, f)); err != nil {
			return nil, fmt.Errorf("the OpenSSL build in %s has no %s: delete %s and build again: %w", dir, f, dir, err)
		}
	}
	return &b, nil
}

// Built reports whether the pinned build is in root's cache, so that
// Ensure would reuse it instead of building (a plan's one-time work).
func Built(root string) bool {
	_, err := cached(root, systemEnv.pin)
	return err == nil
}

// BuildEstimate is the expected wall time of Ensure on a machine without
// the build. That is fetching and checking the source package, then
// Configure and make on 2 cores. Measured: 181 s and 196 s for the build
// alone on machines shared with other work (load 3-4; the stamp's
// BuildSeconds), and about 6 min of a fresh AMD EPYC host's first quick
// run. The larger figure is the estimate, so that a first run does not
// take longer than it said.
const BuildEstimate = 6 * time.Minute

// Ensure returns the pinned OpenSSL build, making it first when it is not
// in the cache. That is, fetch and verify the source (private apt
// configuration, pinned sums), unpack it with dpkg-source, Configure and
// make in a temporary folder, and rename that into place only when
// everything succeeded. A later call finds it and returns at once.
func Ensure(ctx context.Context, root string, log io.Writer) (*Build, error) {
	return ensure(ctx, root, systemEnv, log)
}

func ensure(ctx context.Context, root string, e env, log io.Writer) (*Build, error) {
	if b, err := cached(root, e.pin); err == nil {
		logf(log, "reusing the build of %s %s in %s (built once in %.0f s)", Package, e.pin.version, buildDir(root, e.pin), b.BuildSeconds)
		return b, nil
	}
	cache := CacheDir(root)
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", cache, err)
	}
	tmp, err := os.MkdirTemp(cache, ".build-*")
	if err != nil {
		return nil, fmt.Errorf("build OpenSSL: %w", err)
	}
	defer os.RemoveAll(tmp) // a no-op after the rename
	dl := filepath.Join(tmp, "download")
	if err := os.Mkdir(dl, 0o755); err != nil {
		return nil, err
	}
	if err := fetch(ctx, e, aptConfig{dir: filepath.Join(cache, "apt")}, dl, log); err != nil {
		return nil, err
	}
	if out, err := e.run(ctx, tmp, "dpkg-source", "--no-copy", "-x", filepath.Join(dl, e.pin.dscFile), "src"); err != nil {
		return nil, fmt.Errorf("build OpenSSL: dpkg-source -x %s: %w\n%s(apt-get install -y dpkg-dev)", e.pin.dscFile, err, trunc(out))
	}
	src := filepath.Join(tmp, "src")
	logf(log, "building: %s && make %s in %s (about 6-10 minutes on 2 cores)", configureLine(), MakeTarget, src)
	t0 := time.Now()
	blog, err := os.Create(filepath.Join(tmp, "build.log"))
	if err != nil {
		return nil, err
	}
	berr := e.build(ctx, src, blog)
	blog.Close()
	if berr != nil {
		tail, _ := os.ReadFile(filepath.Join(tmp, "build.log"))
		return nil, fmt.Errorf("build OpenSSL: %w\n%s(nothing was kept; the next run builds again)", berr, trunc(tail))
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("build OpenSSL: %w (nothing was kept)", err)
	}
	secs := time.Since(t0).Seconds()
	ver, err := headerVersion(filepath.Join(src, "include/openssl/opensslv.h"))
	if err != nil {
		return nil, fmt.Errorf("build OpenSSL: %w", err)
	}
	for _, f := range []string{"libssl.a", "libcrypto.a", ProgramPath} {
		if _, err := os.Stat(filepath.Join(src, f)); err != nil {
			return nil, fmt.Errorf("build OpenSSL: make %s made no %s: %w", MakeTarget, f, err)
		}
	}
	if err := os.RemoveAll(dl); err != nil { // 53 MB the tree does not need
		return nil, err
	}
	b := &Build{Package: Package, Version: e.pin.version, Suite: Suite, DscSHA256: e.pin.dscSHA,
		Configure: configureLine(), MakeTarget: MakeTarget, OpenSSLVersion: ver, BuildSeconds: float64(int64(secs*10)) / 10}
	js, _ := json.MarshalIndent(b, "", "  ")
	if err := os.WriteFile(filepath.Join(tmp, stampName), append(js, '\n'), 0o644); err != nil {
		return nil, err
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return nil, err
	}
	final := buildDir(root, e.pin)
	if err := os.RemoveAll(final); err != nil {
		return nil, fmt.Errorf("build OpenSSL: remove the incomplete %s: %w", final, err)
	}
	if err := os.Rename(tmp, final); err != nil {
		return nil, fmt.Errorf("build OpenSSL: %w", err)
	}
	b.Dir = filepath.Join(final, "src")
	logf(log, "built %s %s (OpenSSL %s) in %.0f s into %s", Package, e.pin.version, ver, secs, final)
	return b, nil
}

var versionRE = regexp.MustCompile(`(?m)^#\s*define\s+OPENSSL_FULL_VERSION_STR\s+"([^"]+)"`)

// headerVersion reads OPENSSL_FULL_VERSION_STR from the generated
// opensslv.h.
func headerVersion(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("the build has no %s: %w", filepath.Base(path), err)
	}
	m := versionRE.FindSubmatch(b)
	if m == nil {
		return "", errors.New("opensslv.h defines no OPENSSL_FULL_VERSION_STR")
	}
	return string(m[1]), nil
}

// Requirements are the programs Ensure and Harness need (Debian
// packages); apt-get itself is the system's.
func Requirements() []deps.Requirement {
	const why = "build OpenSSL 3.5 from Debian's source package (tls stack openssl)"
	return []deps.Requirement{
		{Name: "dpkg-source", Why: why, Present: deps.Command("dpkg-source"), Apt: []string{"dpkg-dev"}},
		{Name: "gcc", Why: why, Present: deps.Command("gcc"), Apt: []string{"gcc"}},
		{Name: "make", Why: why, Present: deps.Command("make"), Apt: []string{"make"}},
		{Name: "perl", Why: why, Present: deps.Command("perl"), Apt: []string{"perl"}},
	}
}
