package bundle

import "time"

// A Target is one Mage target as the artifact appendix describes it:
// what it needs and which published claims its output bears on.
type Target struct {
	// Name is what follows `mage` (or `go run mage.go`), e.g. "tls:run".
	Name string
	// Study is the study's short name (tls, net, pico), or "" for a
	// target over every study; StudyTitle is how the appendix names the
	// study (its label and the paper it reproduces), "" for the name.
	Study, StudyTitle string
	// Doc says in one line what the target does.
	Doc string
	// Root is set when the target needs root (packet capture, network
	// namespaces, TUN devices, installing Debian packages).
	Root bool
	// Hardware names hardware beyond a Linux host, if any.
	Hardware string
	// Apt lists the Debian packages the target installs if missing;
	// Npm the folders whose package-lock.json it installs with npm ci.
	Apt, Npm []string
	// Unknown, when set, says why Apt and Npm are not known (for
	// example: the study has not landed in this commit).
	Unknown string
	// Estimate is the expected wall time per profile from the study
	// registry (constants, not measurements); may be empty.
	Estimate map[string]time.Duration
	// Claims are the published claims (the three papers' values, by a
	// provisional ID) that the target's output bears on. Which claim each
	// number supports, and whether it is reproduced, is the claims
	// engine's job (`mage claims`); this is only the map from targets to
	// claims.
	Claims []string
}

// seedClaims lists each study's published numeric claims, as SEEDS.md
// states them, under provisional IDs. It is a reading aid for reviewers:
// the verdicts (reproduced, direction only, not reproduced, not
// measurable) are computed by `mage claims`, never here.
var seedClaims = map[string][]string{
	"tls": {
		"A1: ML-DSA-87 + X25519 vs Ed25519 + X25519: median Ths +4.651 ms (+120 %), significant",
		"A2: Ed25519 + ML-KEM-1024 vs baseline: median Ths +5.072 ms (+128 %), significant",
		"A3: Ed25519 + SecP384r1MLKEM1024 vs baseline: median Ths +9.048 ms (+228 %), significant",
		"A4: implied baseline median Ths about 3.9 ms",
	},
	"net": {
		"B1: X25519MLKEM768 has higher median latency and bytes than X25519 in all nine comparisons",
		"B2: 10,000-attempt round: median differences 0.742 to 2.168 ms",
		"B3: relative latency increase from 46.98 % (fastest scenario) to 2.54 % (slowest)",
		"B4: bytes per connection grow about 100-115 %",
	},
	"pico": {
		"C1: ML-KEM-512 full exchange 35.7 ms vs ECDH P-256 617.0 ms (about 17x faster)",
		"C2: ML-KEM-512 exchange 2.83 mJ vs ECDH P-256 48.9 mJ (94 % less)",
		"C3: ML-KEM-1024 full exchange 85.7 ms",
		"C4: ML-DSA-44 sign mean 158.9 ms, p99 489.9 ms",
		"C5: ML-DSA-87 sign mean 355.2 ms, p99 1,125 ms",
		"C6: ML-DSA sign coefficient of variation 66-73 %",
		"C7: an ML-DSA-44 sign cycle uses less energy than ECDSA P-256",
		"C8: peak stack ML-KEM-1024 decaps about 20 KB; ML-DSA-87 sign 119.6 KB (about 45 % of SRAM)",
		"C9: the same C code on Cortex-M4 is only 1.8-1.9x faster than on the M0+",
	},
}

// SeedClaims returns the provisional list of a study's published claims
// (nil for an unknown study).
func SeedClaims(study string) []string { return append([]string(nil), seedClaims[study]...) }

// CommonTargets describes the targets over every study as the README
// documents them. The bundle knows no study: the composition root
// (package pipeline) adds each registered study's run target, with its
// Debian and npm packages, and the packages of these.
func CommonTargets() []Target {
	all := []string{"all claims of every study: the outputs every claim is evaluated on"}
	return []Target{
		{Name: "build", Doc: "rebuild the stale analysis, figure, table and paper stages from the pinned datasets", Claims: all},
		{Name: "verify", Doc: "re-hash SHA256SUMS and re-derive every output from the committed data in a temporary tree, byte for byte", Claims: all},
		{Name: "paper", Doc: "build paper/main.pdf and what it includes", Claims: all},
	}
}
