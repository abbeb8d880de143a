package picoboard

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// hashOutputs records the SHA-256 of the image's ELF and UF2 files.
func (img *Image) hashOutputs() error {
	for _, f := range []struct {
		path string
		dst  *string
	}{{img.ELF, &img.ELFSHA256}, {img.UF2, &img.UF2SHA256}} {
		b, err := os.ReadFile(f.path)
		if err != nil {
			return fmt.Errorf("hash %s: %w", f.path, err)
		}
		*f.dst = sha256hex(b)
	}
	return nil
}

func sha256hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// pqcleanLock returns the pqclean version the firmware's npm lock file
// pins and the lock file's SHA-256.
func pqcleanLock(root string) (version, sum string, err error) {
	path := filepath.Join(root, "experiments/pico/firmware/deps/package-lock.json")
	b, err := os.ReadFile(path)
	if err != nil {
		return "", "", fmt.Errorf("read PQClean lock file: %w", err)
	}
	var lock struct {
		Packages map[string]struct {
			Version string `json:"version"`
		} `json:"packages"`
	}
	if err := json.Unmarshal(b, &lock); err != nil {
		return "", "", fmt.Errorf("parse %s: %w", path, err)
	}
	v := lock.Packages["node_modules/pqclean"].Version
	if v == "" {
		return "", "", fmt.Errorf("%s pins no node_modules/pqclean: restore it from git", path)
	}
	s := sha256.Sum256(b)
	return v, hex.EncodeToString(s[:]), nil
}

// Provenance returns what meta.json records about the image, as flat string
// pairs with dotted keys. That is, the image and firmware ID, the output
// hashes, compiler and flags, defines, run-time library, clock and its PLL setting, message length, seed and memory
// layout, every source tree's SHA-256 ("source.<name>"), the PQClean npm
// version and lock hash, and the mbedTLS Debian version with its source
// package sums. Lists are joined with single spaces. Keys that do not
// apply (mbedtls.* for a PQ-only image) are absent.
func (img Image) Provenance() map[string]string {
	m := map[string]string{
		"image":       img.Name,
		"schemes":     strings.Join(img.Schemes, " "),
		"profile":     img.Profile,
		"firmware_id": img.FirmwareID,
		"compiler":    img.Compiler,
		"cflags":      strings.Join(img.CFlags, " "),
		"defines":     strings.Join(img.Defines, " "),
		"emulated_by": "rp2040js (experiments/pico/emulator/package-lock.json) with the Cortex-M0+ timing layer experiments/pico/emulator/m0plus-timing.js",
	}
	set := func(k, v string) {
		if v != "" {
			m[k] = v
		}
	}
	set("ldflags", strings.Join(img.LDFlags, " "))
	set("runtime", img.Runtime)
	set("code_in", img.CodeIn)
	if inFlash(img.CodeIn) {
		m["emulated_by"] += " and the XIP cache model experiments/pico/emulator/xip-cache.js"
	}
	if img.ClockMHz != 0 {
		m["clock_mhz"] = strconv.FormatFloat(img.ClockMHz, 'f', -1, 64)
		m["pll_sys"] = fmt.Sprintf("REFDIV 1, FBDIV %d, POSTDIV1 %d, POSTDIV2 %d (VCO %s MHz)", img.PLL.FBDIV, img.PLL.PostDiv1, img.PLL.PostDiv2, formatMHz(img.PLL.VCOKHz()))
	}
	if img.MsgBytes != 0 {
		m["message_bytes"] = strconv.Itoa(img.MsgBytes)
	}
	if img.USBIRQ != 0 {
		m["usb_irq_us"] = strconv.Itoa(img.USBIRQ)
	}
	set("elf_sha256", img.ELFSHA256)
	set("uf2_sha256", img.UF2SHA256)
	if img.Seed != 0 {
		m["seed"] = fmt.Sprintf("0x%x", img.Seed)
	}
	if img.HeapSize != 0 {
		m["heap_bytes"] = strconv.Itoa(img.HeapSize)
	}
	if img.MinStack != 0 {
		m["min_stack_bytes"] = strconv.Itoa(img.MinStack)
	}
	keys := make([]string, 0, len(img.Sources))
	for k := range img.Sources {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		m["source."+k] = img.Sources[k]
	}
	if img.PQCleanVersion != "" {
		m["pqclean.package"] = "pqclean@" + img.PQCleanVersion + " (npm, --ignore-scripts)"
		m["pqclean.version"] = img.PQCleanVersion
		set("pqclean.lock_sha256", img.PQCleanLock)
	}
	if mb := img.MbedTLS; mb != nil {
		m["mbedtls.package"] = mb.Package + " " + mb.Version + " (Debian source package, apt-get source)"
		m["mbedtls.version"] = mb.Version
		m["mbedtls.dsc_sha256"] = mb.DscSHA256
		m["mbedtls.orig_sha256"] = mb.OrigSHA256
		m["mbedtls.debian_sha256"] = mb.DebianSHA256
		m["mbedtls.config"] = "experiments/pico/firmware/mbedtls_config.h"
	}
	return m
}
