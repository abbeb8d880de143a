// Package openssl builds the TLS stack of the original Study A, OpenSSL 3.5,
// from Debian's source package and runs TLS 1.3 handshakes with it. That is, a
// small C server and client (harness/pqssl.c) linked statically against the
// built libssl.a and libcrypto.a, driven from Go (Server, Client) with the
// same configurations, checks and key log as
// experiments/instruments/handshake, so that experiments/tls/tlsrun can
// measure both stacks from one capture.
//
// The source is Debian trixie's openssl source package (Debian's patches
// applied by dpkg-source, as in Debian's own libssl3t64), fetched with
// 'apt-get source' through a private apt configuration under the build
// cache (the system's apt sources and lists are never touched), checked
// against the SHA-256 sums of its .dsc, whose own SHA-256 is pinned here.
// The build lives in .cache/openssl/<version>-<key>/ where the key hashes
// the .dsc sum and the Configure line; it is made in a temporary folder and
// renamed into place only when it is complete, so a half-built tree is
// never used, and every later run reuses it.
package openssl

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"pqrepro/internal/deps"
)

// The pinned source: Debian trixie's OpenSSL 3.5 (a stable update; the
// original study used upstream 3.5.2, the same 3.5 LTS series). The .dsc's
// own SHA-256 is pinned; the other files are checked against the
// Checksums-Sha256 field of that .dsc.
const (
	Package = "openssl"
	Version = "3.5.7-1~deb13u2"
	// Suite is the Debian suite whose deb-src index lists Version.
	Suite     = "trixie"
	DscFile   = "openssl_3.5.7-1~deb13u2.dsc"
	DscSHA256 = "25904642004d30c5c3da4642a72a7d09f8d9eb6e5ce62dab53c0371114faf8f2"
)

// ErrHash is returned (wrapped) when a downloaded file is not the pinned
// one. ErrIncomplete is returned when a file is missing or shorter than
// the .dsc says (a cut download).
var (
	ErrHash       = errors.New("SHA-256 differs from the pinned source: refusing it")
	ErrIncomplete = errors.New("download incomplete")
)

// hint says what to do when fetching fails.
const hint = "needs network to Debian's archive, apt-get and dpkg-source (apt-get install -y dpkg-dev); delete .cache/openssl/apt and retry"

// runFunc runs a program in dir and returns its combined output.
type runFunc func(ctx context.Context, dir, name string, args ...string) ([]byte, error)

func execRun(ctx context.Context, dir, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive", "LC_ALL=C")
	return cmd.CombinedOutput()
}

// aptConfig is a private apt configuration below the build cache. It has
// its own sources (deb-src only, suite Suite, derived from the system's Debian
// sources), its own lists and package cache. It never writes below /etc
// or /var/lib/apt.
type aptConfig struct {
	dir string // <cache>/apt
}

func (a aptConfig) options() []string { return deps.PrivateAptOptions(a.dir) }

// setup writes the private sources from the system's deb822 Debian
// sources file (systemSources, normally /etc/apt/sources.list.d/debian.sources).
func (a aptConfig) setup(systemSources string) error {
	b, err := os.ReadFile(systemSources)
	if err != nil {
		return fmt.Errorf("read the system's Debian sources to derive a deb-src entry from: %w", err)
	}
	src := DebSrcStanzas(b, Suite)
	if len(src) == 0 {
		return fmt.Errorf("%s has no enabled 'Types: deb' stanza for the main Debian archive to derive a deb-src entry from", systemSources)
	}
	for _, d := range []string{"sources.list.d", "lists/partial", "cache/archives/partial"} {
		if err := os.MkdirAll(filepath.Join(a.dir, d), 0o755); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(a.dir, "sources.list"), nil, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(a.dir, "sources.list.d", "debian.sources"), src, 0o644)
}

// DebSrcStanzas returns the stanzas of a deb822 sources file that name the
// main Debian archive, turned into deb-src stanzas.
//
// A main archive stanza has a "deb" type and a suite without a dash (so
// not -updates or -security archives). The result has Types set to
// "deb-src" and Suites to suite; URIs, Components, Signed-By and comments
// are kept as the system has them. Disabled stanzas are dropped.
func DebSrcStanzas(b []byte, suite string) []byte {
	var out bytes.Buffer
	for _, st := range strings.Split(strings.ReplaceAll(string(b), "\r\n", "\n"), "\n\n") {
		var lines []string
		hasDeb, mainSuite, enabled := false, false, true
		for _, l := range strings.Split(st, "\n") {
			if strings.TrimSpace(l) == "" {
				continue
			}
			k, v, ok := strings.Cut(l, ":")
			isField := ok && !strings.HasPrefix(strings.TrimSpace(l), "#") && !strings.HasPrefix(l, " ") && !strings.HasPrefix(l, "\t")
			switch key := strings.TrimSpace(k); {
			case isField && strings.EqualFold(key, "Types"):
				for _, t := range strings.Fields(v) {
					hasDeb = hasDeb || t == "deb"
				}
				l = "Types: deb-src"
			case isField && strings.EqualFold(key, "Suites"):
				for _, s := range strings.Fields(v) {
					mainSuite = mainSuite || !strings.Contains(s, "-")
				}
				l = "Suites: " + suite
			case isField && strings.EqualFold(key, "Enabled"):
				enabled = !strings.EqualFold(strings.TrimSpace(v), "no")
			}
			lines = append(lines, l)
		}
		if !hasDeb || !mainSuite || !enabled {
			continue
		}
		if out.Len() > 0 {
			out.WriteByte('\n')
		}
		out.WriteString(strings.Join(lines, "\n") + "\n")
	}
	return out.Bytes()
}

// DscFileSum is one line of a .dsc's Checksums-Sha256 field.
type DscFileSum struct {
	SHA256 string
	Size   int64
	Name   string
}

// ParseDscSums returns the Checksums-Sha256 entries of a .dsc (Debian
// Policy 5.6.24). The signature armour around a signed .dsc is ignored.
func ParseDscSums(dsc []byte) ([]DscFileSum, error) {
	var out []DscFileSum
	in := false
	sc := bufio.NewScanner(bytes.NewReader(dsc))
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(l, "Checksums-Sha256:") {
			in = true
			continue
		}
		if !in {
			continue
		}
		if !strings.HasPrefix(l, " ") {
			break
		}
		f := strings.Fields(l)
		if len(f) != 3 || len(f[0]) != 64 {
			return nil, fmt.Errorf("Checksums-Sha256 line %q: want <sha256> <size> <name>", strings.TrimSpace(l))
		}
		n, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil || n < 0 || strings.ContainsAny(f[2], "/\\") {
			return nil, fmt.Errorf("Checksums-Sha256 line %q: bad size or file name", strings.TrimSpace(l))
		}
		out = append(out, DscFileSum{SHA256: f[0], Size: n, Name: f[2]})
	}
	if len(out) == 0 {
		return nil, errors.New("the .dsc has no Checksums-Sha256 entries")
	}
	return out, nil
}

// VerifySource checks a downloaded source package in dir. The .dsc's
// SHA-256 must be dscSHA (pinned), and every file its Checksums-Sha256
// lists must be there with exactly that size (ErrIncomplete otherwise) and
// SHA-256 (ErrHash otherwise).
func VerifySource(dir, dscName, dscSHA string) error {
	dsc, err := os.ReadFile(filepath.Join(dir, dscName))
	if err != nil {
		return fmt.Errorf("%w: no %s: %v", ErrIncomplete, dscName, err)
	}
	if got := sha256hex(dsc); got != dscSHA {
		return fmt.Errorf("%s: %w (got %s, pinned %s)", dscName, ErrHash, got, dscSHA)
	}
	sums, err := ParseDscSums(dsc)
	if err != nil {
		return fmt.Errorf("%s: %w", dscName, err)
	}
	for _, s := range sums {
		p := filepath.Join(dir, s.Name)
		fi, err := os.Stat(p)
		if err != nil {
			return fmt.Errorf("%w: %s listed in %s is missing: %v", ErrIncomplete, s.Name, dscName, err)
		}
		if fi.Size() != s.Size {
			return fmt.Errorf("%w: %s has %d bytes, the .dsc says %d (cut download?)", ErrIncomplete, s.Name, fi.Size(), s.Size)
		}
		got, err := fileSHA256(p)
		if err != nil {
			return err
		}
		if got != s.SHA256 {
			return fmt.Errorf("%s: %w (got %s, the pinned .dsc says %s)", s.Name, ErrHash, got, s.SHA256)
		}
	}
	return nil
}

func sha256hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func fileSHA256(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("hash %s: %w", p, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// fetch downloads the pinned source package into dir (which must exist)
// through the private apt configuration and verifies it.
func fetch(ctx context.Context, e env, apt aptConfig, dir string, log io.Writer) error {
	if err := apt.setup(e.systemSources); err != nil {
		return fmt.Errorf("fetch OpenSSL source: %w", err)
	}
	opts := apt.options()
	logf(log, "apt-get update (private deb-src configuration for %s in %s)", Suite, apt.dir)
	if out, err := e.run(ctx, "", "apt-get", append(opts, "update", "-qq")...); err != nil {
		return fmt.Errorf("fetch OpenSSL source: apt-get update: %w\n%s(%s)", err, trunc(out), hint)
	}
	logf(log, "apt-get source --download-only %s=%s", Package, e.pin.version)
	if out, err := e.run(ctx, dir, "apt-get", append(opts, "source", "--download-only", "-qq", Package+"="+e.pin.version)...); err != nil {
		return fmt.Errorf("fetch OpenSSL source: apt-get source %s=%s: %w\n%s(the pinned version may have left the %s index: update Version, DscFile and DscSHA256 in experiments/tls/openssl; %s)", Package, e.pin.version, err, trunc(out), Suite, hint)
	}
	if err := VerifySource(dir, e.pin.dscFile, e.pin.dscSHA); err != nil {
		return fmt.Errorf("fetch OpenSSL source: %w", err)
	}
	return nil
}

func trunc(b []byte) string {
	const max = 2000
	if len(b) > max {
		b = b[len(b)-max:]
	}
	return string(b)
}

func logf(w io.Writer, format string, a ...any) {
	if w != nil {
		fmt.Fprintf(w, "openssl: "+format+"\n", a...)
	}
}

var execLook = exec.LookPath

// runLogged runs a program in dir with its output going to log.
func runLogged(ctx context.Context, dir string, log io.Writer, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %w", name, strings.Join(args, " "), err)
	}
	return nil
}
