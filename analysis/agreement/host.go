package agreement

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
)

// A Fingerprint is what a run's meta.json says about the machine and the
// software that measured it. The host-dependent items of two runs are
// compared only when their fingerprints match.
type Fingerprint struct {
	CPUModel string
	Cores    int
	Kernel   string
	Arch     string
	MemoryKB int64
	// Go is the toolchain's version; Tools the other tools' versions
	// (OpenSSL, the emulator, the compiler) as meta.json records them.
	Go    string
	Tools map[string]string
	// CPUFlags are the CPU flags that decide cryptographic speed (aes,
	// pclmulqdq, avx, avx2, avx512f, bmi2, adx, sha_ni: whether each is
	// present) and CPUFlagsSHA256 the hash of the whole flags line, as
	// meta.json's host records them; nil and "" in a run recorded before
	// the host object had them (unknown, not a difference by itself).
	CPUFlags       map[string]bool
	CPUFlagsSHA256 string
}

// MemoryTolerance is how far two hosts' memory may differ, relative, and
// still count as the same machine kind. A virtual machine's usable memory
// moves by a few MB between boots.
const MemoryTolerance = 0.05

// ReadFingerprint reads a run's fingerprint from its meta.json (the
// "host", "go" and "tools" objects).
func ReadFingerprint(meta []byte) (Fingerprint, error) {
	var m struct {
		Host struct {
			CPUModel string          `json:"cpu_model"`
			Cores    int             `json:"cores"`
			Kernel   string          `json:"kernel"`
			Arch     string          `json:"arch"`
			MemoryKB int64           `json:"memory_kb"`
			CPUFlags map[string]bool `json:"cpu_flags"`
			FlagsSum string          `json:"cpu_flags_sha256"`
		} `json:"host"`
		Go struct {
			Version string `json:"version"`
		} `json:"go"`
		Tools map[string]string `json:"tools"`
	}
	if err := json.Unmarshal(meta, &m); err != nil {
		return Fingerprint{}, fmt.Errorf("read the host fingerprint from meta.json: %w", err)
	}
	if m.Host.CPUModel == "" && m.Host.Cores == 0 {
		return Fingerprint{}, fmt.Errorf("read the host fingerprint from meta.json: it has no \"host\" object")
	}
	return Fingerprint{CPUModel: m.Host.CPUModel, Cores: m.Host.Cores, Kernel: m.Host.Kernel, Arch: m.Host.Arch,
		MemoryKB: m.Host.MemoryKB, Go: m.Go.Version, Tools: m.Tools, CPUFlags: m.Host.CPUFlags, CPUFlagsSHA256: m.Host.FlagsSum}, nil
}

// Differences lists how b differs from a, one phrase each, in a fixed
// order; none means the hosts match.
func (a Fingerprint) Differences(b Fingerprint) []string {
	var d []string
	diff := func(what, x, y string) {
		if x != y {
			d = append(d, fmt.Sprintf("%s %q vs %q", what, x, y))
		}
	}
	diff("CPU", a.CPUModel, b.CPUModel)
	if a.Cores != b.Cores {
		d = append(d, fmt.Sprintf("cores %d vs %d", a.Cores, b.Cores))
	}
	if ka, kb := kernelRelease(a.Kernel), kernelRelease(b.Kernel); ka != kb {
		d = append(d, fmt.Sprintf("kernel release %q vs %q", ka, kb))
	}
	diff("arch", a.Arch, b.Arch)
	if hi := math.Max(float64(a.MemoryKB), float64(b.MemoryKB)); hi > 0 && math.Abs(float64(a.MemoryKB-b.MemoryKB)) > MemoryTolerance*hi {
		d = append(d, fmt.Sprintf("memory %d vs %d kB", a.MemoryKB, b.MemoryKB))
	}
	if a.flagsRecorded() && b.flagsRecorded() {
		for _, f := range slices.Sorted(maps.Keys(a.CPUFlags)) {
			if a.CPUFlags[f] != b.CPUFlags[f] {
				d = append(d, fmt.Sprintf("CPU flag %s %s vs %s", f, presence(a.CPUFlags[f]), presence(b.CPUFlags[f])))
			}
		}
		for _, f := range slices.Sorted(maps.Keys(b.CPUFlags)) {
			if _, ok := a.CPUFlags[f]; !ok && b.CPUFlags[f] {
				d = append(d, fmt.Sprintf("CPU flag %s not recorded vs present", f))
			}
		}
		if a.CPUFlagsSHA256 != "" && b.CPUFlagsSHA256 != "" && a.CPUFlagsSHA256 != b.CPUFlagsSHA256 {
			d = append(d, "CPU flags line differs (sha256 "+short(a.CPUFlagsSHA256)+" vs "+short(b.CPUFlagsSHA256)+")")
		}
	}
	diff("Go", a.Go, b.Go)
	keys := slices.Sorted(maps.Keys(a.Tools))
	for _, k := range slices.Sorted(maps.Keys(b.Tools)) {
		if _, ok := a.Tools[k]; !ok {
			keys = append(keys, k)
		}
	}
	for _, k := range keys {
		diff(k, a.Tools[k], b.Tools[k])
	}
	return d
}

// Unknown lists what Differences could not compare because one run did
// not record it. A run recorded before meta.json's host had the CPU
// flags has none, which is unknown, not a mismatch by itself.
func (a Fingerprint) Unknown(b Fingerprint) []string {
	switch {
	case !a.flagsRecorded() && !b.flagsRecorded():
		return []string{"cpu flags not recorded in either run"}
	case !a.flagsRecorded():
		return []string{"cpu flags not recorded in the reference run"}
	case !b.flagsRecorded():
		return []string{"cpu flags not recorded in the new run"}
	}
	return nil
}

// kernelRelease is a kernel string without its build suffix: "Linux
// 6.18.44-fc-v1272" gives "Linux 6.18.44". Two virtual machines of one
// kind run the same kernel release under different build strings (a
// suffix per build of the image), which move no time this project
// measures; the release (its version numbers) can, through the network
// stack and the scheduler, so it stays in the fingerprint.
func kernelRelease(k string) string {
	name, version, ok := strings.Cut(strings.TrimSpace(k), " ")
	if !ok {
		name, version = "", name
	}
	release, _, _ := strings.Cut(version, "-")
	return strings.TrimSpace(name + " " + release)
}

func (a Fingerprint) flagsRecorded() bool { return len(a.CPUFlags) > 0 || a.CPUFlagsSHA256 != "" }

func presence(p bool) string {
	if p {
		return "present"
	}
	return "absent"
}

func short(sum string) string { return sum[:min(len(sum), 12)] }

// A ClaimVerdicts is one claim as the two runs judge it.
type ClaimVerdicts struct {
	Ref, New string // the verdicts
	Class    Class  // of the quantity the claim judges
	// Item is the judged item whose estimate the claim's verdict rests
	// on, when the study names one (nil otherwise).
	Item *Judged
}

// CompareClaim says whether two runs' verdicts on a claim agree: the same
// verdict is consistent; a host-dependent claim is compared only on a
// matching host. A verdict that flips while the claim's item is inside
// its prediction interval, or outside it but not rejected by Holm over
// the family of items, is "consistent (verdict at the edge)": the
// estimate moved no more than sampling allows, across the tolerance.
func CompareClaim(c ClaimVerdicts, hostsMatch bool) (Status, string) {
	switch {
	case c.Class == HostDependent && !hostsMatch:
		return NotJudged, ReasonHostDiffers
	case c.Ref == c.New:
		return Consistent, "same verdict"
	case c.Item != nil && c.Item.Status == Consistent && c.Item.Inside:
		return Consistent, "consistent (verdict at the edge): the verdict changed, the estimate is inside its interval"
	case c.Item != nil && c.Item.Status == Consistent:
		// The item is judged with the whole family (Holm): a verdict
		// that flips on an estimate the family-wise rule accepts is held
		// to the same rule, or one claim would be a test at 5 % of its
		// own beside a family controlled at 5 %.
		return Consistent, "consistent (verdict at the edge): the verdict changed, the estimate is outside its per-item interval but not rejected by Holm over the family"
	}
	return Inconsistent, "VERDICT DIFFERS"
}
