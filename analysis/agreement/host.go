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
	// CrossHost is that item judged across hosts (its ratio to the new
	// host's own prediction against the spread of the repository's
	// hosts), or nil when no cross-host prediction was formed.
	CrossHost *CrossVerdict
}

// A CrossVerdict is one run's normalised item against the cross-host
// prediction interval [Lo, Hi] fitted on Hosts hosts.
type CrossVerdict struct {
	Ratio, Lo, Hi float64
	Hosts         int
}

// Inside reports whether the ratio lies in the interval.
func (c CrossVerdict) Inside() bool { return c.Ratio >= c.Lo && c.Ratio <= c.Hi }

// The words of a claim's comparison (CompareClaim's second result begins
// with one of them).
const (
	VerdictSame    = "same verdict"
	VerdictEdge    = "consistent (verdict at the edge)"
	VerdictDiffers = "VERDICT DIFFERS"
)

// CompareClaim says whether two runs' verdicts on a claim agree.
//
// The same verdict is consistent; a host-dependent claim is compared only
// on a matching host. A verdict that flips while the estimate it rests on
// is consistent with the reference's is "consistent (verdict at the
// edge)": the estimate moved no more than sampling allows, and only the
// test's outcome crossed its threshold. Only a flip that the estimate
// supports is VERDICT DIFFERS.
//
// On a matching host the estimate is the claim's item, judged with the
// whole family (Holm): a flip on an estimate the family-wise rule accepts
// is held to that rule, or one claim would be a test at 5 % of its own
// beside a family controlled at 5 %.
//
// On an unlike host a host-independent claim's flip is judged by, in
// order: the item's cross-host prediction (CrossHost: its ratio to the
// host's own prediction, inside or outside the spread of every host);
// else the item itself when it is host-independent, or judged on its
// host-free scale in the family (Item.StandIn); else it is not judged,
// with the reason, and fails nothing by itself. A claim with no item is
// not judged across hosts either: a verdict alone cannot say whether the
// host or the effect moved.
func CompareClaim(c ClaimVerdicts, hostsMatch bool) (Status, string) {
	switch {
	case c.Class == HostDependent && !hostsMatch:
		return NotJudged, ReasonHostDiffers
	case c.Ref == c.New:
		return Consistent, VerdictSame
	case !hostsMatch:
		return compareAcrossHosts(c)
	}
	return byItem(c.Item)
}

// byItem judges a flipped verdict by the family's verdict on its item.
func byItem(it *Judged) (Status, string) {
	scale := ""
	if it != nil && it.OnHostFree {
		scale = " (as a " + it.HostFree.Unit + ", the hosts differing)"
	}
	switch {
	case it != nil && it.Status == Consistent && it.Inside:
		return Consistent, VerdictEdge + ": the verdict changed, the estimate" + scale + " is inside its interval"
	case it != nil && it.Status == Consistent:
		return Consistent, VerdictEdge + ": the verdict changed, the estimate" + scale + " is outside its per-item interval but not rejected by Holm over the family"
	case it != nil && it.Status == Inconsistent && scale != "":
		return Inconsistent, VerdictDiffers + ": the estimate" + scale + " differs from the reference's (" + it.Why + ")"
	}
	return Inconsistent, VerdictDiffers
}

// compareAcrossHosts judges a host-independent claim's flip between runs
// on unlike hosts (CompareClaim).
func compareAcrossHosts(c ClaimVerdicts) (Status, string) {
	const notJudged = "not judged: the verdict changed on an unlike host and "
	switch {
	case c.Item == nil:
		return NotJudged, notJudged + "the claim names no estimate to judge the change by"
	case c.CrossHost != nil && c.CrossHost.Inside():
		return Consistent, fmt.Sprintf("%s: the verdict changed, the estimate's ratio to this host's own prediction, %.2f, is inside the cross-host interval [%.2f, %.2f] (%d hosts)",
			VerdictEdge, c.CrossHost.Ratio, c.CrossHost.Lo, c.CrossHost.Hi, c.CrossHost.Hosts)
	case c.CrossHost != nil:
		return Inconsistent, fmt.Sprintf("%s: the estimate's ratio to this host's own prediction, %.2f, is outside the cross-host interval [%.2f, %.2f] (%d hosts)",
			VerdictDiffers, c.CrossHost.Ratio, c.CrossHost.Lo, c.CrossHost.Hi, c.CrossHost.Hosts)
	case c.Item.Status == NotJudged:
		why := c.Item.Why
		if why == "" {
			why = c.Item.Reason
		}
		return NotJudged, notJudged + "its estimate could not be judged (" + why + ")"
	}
	return byItem(c.Item)
}
