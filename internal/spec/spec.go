// Package spec reads the experiment specifications experiments/<study>.toml
// and keeps their [runs] table, which pins the raw dataset the paper uses
// for each profile.
//
// Decoding is strict: a key the study does not know (a misspelt
// parameter) is an error naming the key, not a silently ignored setting.
package spec

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"

	"pqrepro/internal/atomicfile"
)

// Path returns the spec file of a study, relative to the repository root.
func Path(study string) string { return "experiments/" + study + ".toml" }

// Load decodes the spec file at path into v (a pointer to the study's
// spec struct), rejecting unknown keys.
func Load(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read spec: %w", err)
	}
	md, err := toml.Decode(string(b), v)
	if err != nil {
		return fmt.Errorf("spec %s: %w", path, err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		keys := make([]string, len(und))
		for i, k := range und {
			keys[i] = k.String()
		}
		slices.Sort(keys)
		return fmt.Errorf("spec %s: unknown key(s) %s: check the spelling against the study's documentation", path, strings.Join(keys, ", "))
	}
	return nil
}

// Runs is the [runs] table: profile name -> pin. A pin is a run ID
// followed by the SHA-256 of the run's MANIFEST.sha256 (the seal that
// lists every file of the run, internal/repro), as written by Sealed:
//
//	full = "20261130T124752Z-full@sha256:<64 hex digits>"
//
// so that a pinned run cannot change without its manifest changing, nor
// its manifest without the pin changing. A pin without the hash (from
// before manifests) still names a run, and the build refuses it until
// the run is sealed (`pqrepro seal`).
type Runs map[string]string

var (
	runIDPattern  = regexp.MustCompile(`^[0-9]{8}T[0-9]{6}Z-[a-z0-9-]+$`)
	sha256Pattern = regexp.MustCompile(`^[0-9a-f]{64}$`)
)

// sealSep separates a pin's run ID from its manifest hash.
const sealSep = "@sha256:"

// Sealed returns the pin of the run runID whose manifest hashes to
// manifest ("" gives the bare run ID).
func Sealed(runID, manifest string) string {
	if manifest == "" {
		return runID
	}
	return runID + sealSep + manifest
}

// ParsePin splits a pin into its run ID and manifest SHA-256 ("" when the
// pin has none), rejecting anything else.
func ParsePin(pin string) (runID, manifest string, err error) {
	runID, manifest, sealed := strings.Cut(pin, sealSep)
	if !runIDPattern.MatchString(runID) {
		return "", "", fmt.Errorf("%q is not a run ID (like 20261130T120000Z-quick), optionally followed by %s<manifest SHA-256>", runID, sealSep)
	}
	if sealed && !sha256Pattern.MatchString(manifest) {
		return "", "", fmt.Errorf("pin %q: %q after %s is not a lower-case hex SHA-256", pin, manifest, sealSep)
	}
	return runID, manifest, nil
}

// PinnedRun returns the folder, relative to root, of the run pinned for
// profile in the study's spec, or "" when none is pinned. A pinned run
// that does not exist is an error: the spec and data/ disagree.
func PinnedRun(root, study, profile string) (string, error) {
	dir, _, err := PinnedSeal(root, study, profile)
	return dir, err
}

// PinnedSeal is PinnedRun, and also returns the manifest SHA-256 the pin
// records ("" when it records none).
func PinnedSeal(root, study, profile string) (dir, manifest string, err error) {
	var s struct {
		Runs Runs `toml:"runs"`
	}
	b, err := os.ReadFile(filepath.Join(root, Path(study)))
	if errors.Is(err, os.ErrNotExist) {
		return "", "", nil
	}
	if err != nil {
		return "", "", fmt.Errorf("read spec: %w", err)
	}
	if _, err := toml.Decode(string(b), &s); err != nil {
		return "", "", fmt.Errorf("spec %s: %w", Path(study), err)
	}
	pin := s.Runs[profile]
	if pin == "" {
		return "", "", nil
	}
	id, manifest, err := ParsePin(pin)
	if err != nil {
		return "", "", fmt.Errorf("spec %s: [runs] %s: %w; restore it with `git checkout -- %s`", Path(study), profile, err, Path(study))
	}
	rel := "data/" + study + "/" + id
	if _, err := os.Stat(filepath.Join(root, rel)); err != nil {
		return "", "", fmt.Errorf("spec %s pins %s for the %s profile, but %s does not exist: restore it (git checkout) or rerun `mage %s:run`", Path(study), id, profile, rel, study)
	}
	return rel, manifest, nil
}

// Pin sets profile = "pin" in the [runs] table of the spec at path,
// changing only that line.
//
// Pin is a run ID or, for a sealed run, Sealed(runID, manifest).
// Comments and layout are kept, and the file is written atomically.
func Pin(path, profile, pin string) error {
	if _, _, err := ParsePin(pin); err != nil {
		return fmt.Errorf("pin: %w", err)
	}
	runID := pin
	if !regexp.MustCompile(`^[a-z][a-z0-9_-]*$`).MatchString(profile) {
		return fmt.Errorf("pin: %q is not a profile name", profile)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("pin run: %w", err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	entry := fmt.Sprintf("%s = %q\n", profile, runID)
	keyRE := regexp.MustCompile(`^\s*` + regexp.QuoteMeta(profile) + `\s*=`)
	section := -1
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if t == "[runs]" {
			section = i
			continue
		}
		if section >= 0 && strings.HasPrefix(t, "[") {
			// End of [runs] without the key: insert before the blank
			// lines that precede the next table.
			j := i
			for j > section+1 && strings.TrimSpace(lines[j-1]) == "" {
				j--
			}
			lines = slices.Insert(lines, j, entry)
			section = -2
			break
		}
		if section >= 0 && keyRE.MatchString(l) {
			lines[i] = entry
			section = -2
			break
		}
	}
	switch {
	case section == -1:
		if len(lines) > 0 && !strings.HasSuffix(lines[len(lines)-1], "\n") {
			lines[len(lines)-1] += "\n"
		}
		lines = append(lines, "\n[runs]\n", entry)
	case section >= 0:
		if len(lines) > 0 && !strings.HasSuffix(lines[len(lines)-1], "\n") {
			lines[len(lines)-1] += "\n"
		}
		lines = append(lines, entry)
	}
	out := []byte(strings.Join(lines, ""))
	// The result must still be valid TOML with the new pin.
	var check struct {
		Runs Runs `toml:"runs"`
	}
	if _, err := toml.NewDecoder(bytes.NewReader(out)).Decode(&check); err != nil || check.Runs[profile] != runID {
		return fmt.Errorf("pin run in %s: the edited file would not parse (%v); edit [runs] by hand", path, err)
	}
	return atomicfile.WriteFile(path, out, 0o644)
}

// PinnedIn returns the run ID pinned for profile in the spec file at
// path (without the manifest hash), or "" when none is.
func PinnedIn(path, profile string) (string, error) {
	var s struct {
		Runs Runs `toml:"runs"`
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("read spec: %w", err)
	}
	if _, err := toml.Decode(string(b), &s); err != nil {
		return "", fmt.Errorf("spec %s: %w", path, err)
	}
	if s.Runs[profile] == "" {
		return "", nil
	}
	id, _, err := ParsePin(s.Runs[profile])
	if err != nil {
		return "", fmt.Errorf("spec %s: [runs] %s: %w", path, profile, err)
	}
	return id, nil
}

// WithoutPins returns the spec b without its [runs] table. The table's
// header and key lines are dropped, and so are the blank lines it leaves
// at the end of the file; every other byte is kept. Two specs that
// differ only in what they pin are the same design: the same experiment,
// told to do the same things. Its SHA-256 is meta.json's
// spec_design_sha256, which matches the runs of one design across the
// pins that recording them adds (the repeat runs of the between-run
// variance; docs/agreement.md), where spec_sha256, the hash of the whole
// file, changes with every pin.
func WithoutPins(b []byte) []byte {
	lines := strings.SplitAfter(string(b), "\n")
	out := make([]string, 0, len(lines))
	inRuns := false
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "[") {
			header, _, _ := strings.Cut(t, "#")
			if inRuns = strings.TrimSpace(header) == "[runs]"; inRuns {
				continue
			}
		}
		if inRuns && t != "" && !strings.HasPrefix(t, "#") {
			continue
		}
		out = append(out, l)
	}
	s := strings.TrimRight(strings.Join(out, ""), " \t\r\n")
	if s == "" {
		return nil
	}
	return []byte(s + "\n")
}
