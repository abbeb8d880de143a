package picoboard

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"pqrepro/internal/atomicfile"
	"pqrepro/internal/deps"
)

// The pinned mbedTLS: Debian bookworm's source package, fetched with
// 'apt-get source' and unpacked with dpkg-source (so Debian's patches are
// applied, as in Debian's own libmbedcrypto7). The SHA-256 sums are those of
// the package's Checksums-Sha256 field; a download that differs is refused.
const (
	MbedTLSPackage       = "mbedtls"
	MbedTLSVersion       = "2.28.3-1" // Debian source version (upstream 2.28.3 LTS)
	mbedtlsDscFile       = "mbedtls_2.28.3-1.dsc"
	mbedtlsOrigFile      = "mbedtls_2.28.3.orig.tar.gz"
	mbedtlsDebianFile    = "mbedtls_2.28.3-1.debian.tar.xz"
	mbedtlsDscSHA256     = "a8bf91b5ffb40654efb0ebe0c962ac1e87b8eed5e104880982eaa70dd4bb33e3"
	mbedtlsOrigSHA256    = "3b4953aa55a681e084d31892d9904cc5328d6b4958ea57b90ae4b4f94ae69a8d"
	mbedtlsDebianSHA256  = "3e03c61f63c7bbcd0bf695b53e6663ab448cc2e15429cd67d0e4f32e699645a9"
	hintMbedTLS          = "needs dpkg-dev (apt-get install -y dpkg-dev) and network to the Debian archive the system's sources name: pqrepro fetches through a private apt configuration under .cache/pico/apt (deb-src entries derived from the system's sources) and never writes below /etc"
	mbedtlsSourcesName   = "pqrepro-debian-src.sources"
	mbedtlsStampFileName = ".pqrepro-fetched.json"
)

// mbedtlsFiles are the mbedTLS library sources the classical baselines
// need with firmware/mbedtls_config.h. They are multi-precision integers, RSA
// (PKCS#1 v1.5 with its DigestInfo OIDs), the NIST P-256 curve, ECDSA with
// its ASN.1 helpers, ECDH, SHA-256, the message-digest layer and the
// HMAC_DRBG that blinds ECP multiplications without an f_rng.
var mbedtlsFiles = []string{
	"asn1parse.c", "asn1write.c", "bignum.c", "constant_time.c", "ecdh.c", "ecdsa.c",
	"ecp.c", "ecp_curves.c", "hmac_drbg.c", "md.c", "oid.c", "platform_util.c", "rsa.c",
	"rsa_internal.c", "sha256.c",
}

// MbedTLSSource is the unpacked, verified mbedTLS source tree and what
// meta.json records about it.
type MbedTLSSource struct {
	Dir          string `json:"-"`
	Package      string `json:"package"`
	Version      string `json:"version"`
	DscSHA256    string `json:"dsc_sha256"`
	OrigSHA256   string `json:"orig_sha256"`
	DebianSHA256 string `json:"debian_sha256"`
}

func pinnedMbedTLS(dir string) MbedTLSSource {
	return MbedTLSSource{Dir: dir, Package: MbedTLSPackage, Version: MbedTLSVersion,
		DscSHA256: mbedtlsDscSHA256, OrigSHA256: mbedtlsOrigSHA256, DebianSHA256: mbedtlsDebianSHA256}
}

// aptEnv is where EnsureMbedTLS finds apt; tests point it elsewhere.
// The system's sources are only read: the fetch runs apt through a private
// configuration (its own sources, lists and package cache) under the
// build cache, as experiments/tls/openssl does, and never writes a system
// file. (Versions before this one wrote
// /etc/apt/sources.list.d/pqrepro-debian-src.sources; pqrepro leaves that
// file, if any, to the system's administrator.)
type aptEnv struct {
	sourcesDir  string // /etc/apt/sources.list.d, read only
	sourcesList string // /etc/apt/sources.list, read only
	run         func(ctx context.Context, dir string, name string, args ...string) ([]byte, error)
}

var systemApt = aptEnv{
	sourcesDir:  "/etc/apt/sources.list.d",
	sourcesList: "/etc/apt/sources.list",
	run: func(ctx context.Context, dir string, name string, args ...string) ([]byte, error) {
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive", "LC_ALL=C")
		return cmd.CombinedOutput()
	},
}

// privateApt is the private apt configuration below dir (<cache>/apt).
type privateApt struct{ dir string }

// options are the apt-get and apt-cache options that make apt read and
// write only below p.dir.
func (p privateApt) options() []string { return deps.PrivateAptOptions(p.dir) }

// apt runs apt-get or apt-cache through the private configuration.
func (a aptEnv) apt(ctx context.Context, p privateApt, dir, name string, args ...string) ([]byte, error) {
	return a.run(ctx, dir, name, append(p.options(), args...)...)
}

// EnsureMbedTLS fetches the pinned Debian mbedTLS source package into
// .cache/pico/mbedtls-<version> (git-ignored) on first use and returns the
// unpacked tree's root. The steps, each of which says what to do when it
// fails: if apt knows no source package mbedtls <version>, add deb-src
// entries derived from the system's Debian sources (EnsureDebSrc) and run
// apt-get update (root only); 'apt-get source --download-only'; check the
// .dsc, .orig.tar.gz and .debian.tar.xz against the pinned SHA-256 sums;
// 'dpkg-source -x'; rename into place (so an interrupted fetch leaves no
// half tree).
func EnsureMbedTLS(ctx context.Context, root string, log io.Writer) (string, error) {
	src, err := ensureMbedTLS(ctx, root, systemApt, log)
	return src.Dir, err
}

// MbedTLSProvenance returns the provenance of the fetched mbedTLS tree under
// root, or an error when it was not fetched yet.
func MbedTLSProvenance(root string) (MbedTLSSource, error) {
	dir := filepath.Join(root, ".cache/pico", "mbedtls-"+MbedTLSVersion)
	b, err := os.ReadFile(filepath.Join(dir, mbedtlsStampFileName))
	if err != nil {
		return MbedTLSSource{}, fmt.Errorf("mbedTLS not fetched (build a classic image first): %w", err)
	}
	var s MbedTLSSource
	if err := json.Unmarshal(b, &s); err != nil {
		return MbedTLSSource{}, fmt.Errorf("read %s: %w (delete %s and rebuild)", mbedtlsStampFileName, err, dir)
	}
	if s != pinnedMbedTLS("") {
		return MbedTLSSource{}, fmt.Errorf("%s records %+v, not the pinned %s; delete %s and rebuild", filepath.Join(dir, mbedtlsStampFileName), s, MbedTLSVersion, dir)
	}
	s.Dir = filepath.Join(dir, "src")
	return s, nil
}

func ensureMbedTLS(ctx context.Context, root string, apt aptEnv, log io.Writer) (MbedTLSSource, error) {
	cache := filepath.Join(root, ".cache/pico")
	if s, err := MbedTLSProvenance(root); err == nil {
		if _, err := os.Stat(filepath.Join(s.Dir, "library/bignum.c")); err == nil {
			return s, nil
		}
	}
	final := filepath.Join(cache, "mbedtls-"+MbedTLSVersion)
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return MbedTLSSource{}, fmt.Errorf("create %s: %w", cache, err)
	}
	for _, tool := range []string{"apt-get", "apt-cache", "dpkg-source"} {
		if _, err := exec.LookPath(tool); err != nil {
			return MbedTLSSource{}, fmt.Errorf("fetch mbedTLS: %s not found (apt-get install -y dpkg-dev): %w", tool, err)
		}
	}
	priv := privateApt{dir: filepath.Join(cache, "apt")}
	if !aptHasSource(ctx, apt, priv) {
		added, err := PrivateDebSrc(apt.sourcesDir, apt.sourcesList, priv.dir)
		if err != nil {
			return MbedTLSSource{}, fmt.Errorf("fetch mbedTLS: %w", err)
		}
		if log != nil {
			fmt.Fprintf(log, "pico: apt-get update with a private configuration (%s, derived from the system's sources; no system file is written)\n", added)
		}
		if out, err := apt.apt(ctx, priv, "", "apt-get", "update", "-qq"); err != nil {
			return MbedTLSSource{}, fmt.Errorf("fetch mbedTLS: apt-get update: %w\n%s(%s)", err, trunc(string(out), 2000), hintMbedTLS)
		}
		if !aptHasSource(ctx, apt, priv) {
			return MbedTLSSource{}, fmt.Errorf("fetch mbedTLS: apt still has no source package %s %s after adding deb-src; the pinned version may have left the archive: update MbedTLSVersion and the pinned sums in mbedtls.go (%s)", MbedTLSPackage, MbedTLSVersion, hintMbedTLS)
		}
	}
	tmp, err := os.MkdirTemp(cache, ".mbedtls-fetch-*")
	if err != nil {
		return MbedTLSSource{}, fmt.Errorf("fetch mbedTLS: %w", err)
	}
	defer os.RemoveAll(tmp)
	if log != nil {
		fmt.Fprintf(log, "pico: apt-get source --download-only %s=%s\n", MbedTLSPackage, MbedTLSVersion)
	}
	if out, err := apt.apt(ctx, priv, tmp, "apt-get", "source", "--download-only", "-qq", MbedTLSPackage+"="+MbedTLSVersion); err != nil {
		return MbedTLSSource{}, fmt.Errorf("fetch mbedTLS: apt-get source: %w\n%s(%s)", err, trunc(string(out), 2000), hintMbedTLS)
	}
	if err := checkPinnedFiles(tmp, map[string]string{
		mbedtlsDscFile: mbedtlsDscSHA256, mbedtlsOrigFile: mbedtlsOrigSHA256, mbedtlsDebianFile: mbedtlsDebianSHA256,
	}); err != nil {
		return MbedTLSSource{}, fmt.Errorf("fetch mbedTLS: %w", err)
	}
	if out, err := apt.run(ctx, tmp, "dpkg-source", "--no-copy", "-x", mbedtlsDscFile, "src"); err != nil {
		return MbedTLSSource{}, fmt.Errorf("fetch mbedTLS: dpkg-source -x: %w\n%s", err, trunc(string(out), 2000))
	}
	for _, f := range mbedtlsFiles {
		if _, err := os.Stat(filepath.Join(tmp, "src/library", f)); err != nil {
			return MbedTLSSource{}, fmt.Errorf("fetch mbedTLS: the unpacked %s has no library/%s: %w", MbedTLSVersion, f, err)
		}
	}
	s := pinnedMbedTLS("")
	b, _ := json.MarshalIndent(s, "", "  ")
	if err := os.WriteFile(filepath.Join(tmp, mbedtlsStampFileName), b, 0o644); err != nil {
		return MbedTLSSource{}, fmt.Errorf("fetch mbedTLS: %w", err)
	}
	if err := os.RemoveAll(final); err != nil {
		return MbedTLSSource{}, fmt.Errorf("fetch mbedTLS: remove stale %s: %w", final, err)
	}
	if err := os.Rename(tmp, final); err != nil {
		return MbedTLSSource{}, fmt.Errorf("fetch mbedTLS: %w", err)
	}
	s.Dir = filepath.Join(final, "src")
	return s, nil
}

// aptHasSource reports whether the private configuration's source lists
// offer the pinned version.
func aptHasSource(ctx context.Context, apt aptEnv, p privateApt) bool {
	if _, err := os.Stat(filepath.Join(p.dir, "lists")); err != nil {
		return false // never updated: apt would read the system's lists
	}
	out, err := apt.apt(ctx, p, "", "apt-cache", "showsrc", "--only-source", MbedTLSPackage)
	if err != nil {
		return false
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "Version: "+MbedTLSVersion {
			return true
		}
	}
	return false
}

// checkPinnedFiles compares each file's SHA-256 with its pinned sum.
func checkPinnedFiles(dir string, pins map[string]string) error {
	for name, want := range pins {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return fmt.Errorf("apt-get source gave no %s: %w", name, err)
		}
		sum := sha256.Sum256(b)
		if got := hex.EncodeToString(sum[:]); got != want {
			return fmt.Errorf("%s has SHA-256 %s, pinned %s: refusing a source that is not the pinned one", name, got, want)
		}
	}
	return nil
}

// PrivateDebSrc writes the private apt configuration below privDir. That is,
// deb-src entries derived from the system's Debian sources
// (sourcesDir/debian.sources, deb822, the Debian 12 default, or else the
// one-line sourcesList, read only), every "deb" type turned into "deb-src", in
// privDir/sources.list.d/pqrepro-debian-src.sources (or .list), an empty
// privDir/sources.list, and the folders apt's lists and cache need. It returns
// the sources file written. It writes no host name of its own (the archives
// are the system's) and nothing outside privDir, so it needs no root.
func PrivateDebSrc(sourcesDir, sourcesList, privDir string) (string, error) {
	var out []byte
	name := mbedtlsSourcesName
	if b, err := os.ReadFile(filepath.Join(sourcesDir, "debian.sources")); err == nil {
		out = DebSrcFromDeb822(b)
	}
	if len(out) == 0 {
		if b, err := os.ReadFile(sourcesList); err == nil {
			out = DebSrcFromOneLine(b)
			name = strings.TrimSuffix(mbedtlsSourcesName, ".sources") + ".list"
		}
	}
	if len(out) == 0 {
		return "", fmt.Errorf("no Debian 'deb' sources found in %s/debian.sources or %s to derive deb-src entries from (%s)", sourcesDir, sourcesList, hintMbedTLS)
	}
	for _, d := range []string{"sources.list.d", "lists/partial", "cache/archives/partial"} {
		if err := os.MkdirAll(filepath.Join(privDir, d), 0o755); err != nil {
			return "", err
		}
	}
	if err := atomicfile.WriteFile(filepath.Join(privDir, "sources.list"), nil, 0o644); err != nil {
		return "", err
	}
	path := filepath.Join(privDir, "sources.list.d", name)
	if err := atomicfile.WriteFile(path, out, 0o644); err != nil {
		return "", err
	}
	return path, nil
}

// hasDebSrc reports whether a sources file (deb822 or one-line) has an
// enabled deb-src entry.
func hasDebSrc(b []byte) bool {
	for _, l := range strings.Split(string(b), "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "deb-src ") {
			return true
		}
		if k, v, ok := strings.Cut(l, ":"); ok && strings.EqualFold(strings.TrimSpace(k), "Types") {
			for _, t := range strings.Fields(v) {
				if t == "deb-src" {
					return true
				}
			}
		}
	}
	return false
}

// DebSrcFromDeb822 turns the "deb" stanzas of a deb822 sources file into
// "deb-src" ones.
//
// Every other field (URIs, Suites, Components, Signed-By, comments) is kept;
// stanzas marked "Enabled: no" and those without deb are dropped.
func DebSrcFromDeb822(b []byte) []byte {
	var out bytes.Buffer
	for _, stanza := range splitStanzas(string(b)) {
		hasDeb, enabled := false, true
		var lines []string
		for _, l := range stanza {
			k, v, ok := strings.Cut(l, ":")
			key := strings.TrimSpace(k)
			if ok && !strings.HasPrefix(strings.TrimSpace(l), "#") && !strings.HasPrefix(l, " ") && !strings.HasPrefix(l, "\t") {
				switch {
				case strings.EqualFold(key, "Types"):
					for _, t := range strings.Fields(v) {
						if t == "deb" {
							hasDeb = true
						}
					}
					lines = append(lines, "Types: deb-src")
					continue
				case strings.EqualFold(key, "Enabled"):
					enabled = !strings.EqualFold(strings.TrimSpace(v), "no")
				}
			}
			lines = append(lines, l)
		}
		if !hasDeb || !enabled {
			continue
		}
		if out.Len() > 0 {
			out.WriteByte('\n')
		}
		out.WriteString(strings.Join(lines, "\n"))
		out.WriteByte('\n')
	}
	return out.Bytes()
}

func splitStanzas(s string) [][]string {
	var st [][]string
	var cur []string
	for _, l := range strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n") {
		if strings.TrimSpace(l) == "" {
			if len(cur) > 0 {
				st = append(st, cur)
				cur = nil
			}
			continue
		}
		cur = append(cur, l)
	}
	if len(cur) > 0 {
		st = append(st, cur)
	}
	return st
}

// DebSrcFromOneLine turns the "deb ..." lines of a one-line sources.list
// into "deb-src ..." lines, options and all.
func DebSrcFromOneLine(b []byte) []byte {
	var out bytes.Buffer
	for _, l := range strings.Split(string(b), "\n") {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "deb ") || strings.HasPrefix(t, "deb\t") {
			out.WriteString("deb-src" + t[3:] + "\n")
		}
	}
	return out.Bytes()
}

// trunc shortens s to n bytes for an error message.
func trunc(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}
