package bundle

import "time"

// A Target is one Mage target as the artifact appendix describes it:
// what it needs and which published claims its output bears on.
type Target struct {
	// Name is what follows `mage` (or `go run mage.go`), e.g. "tls:run".
	Name string
	// Study is the study's short name (tls, net, pico), or "" for a
	// target over every study.
	Study string
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
	// Claims are the published claims that the target's output bears on,
	// one line each, under the IDs of the paper's claims tables (A1a, B1,
	// C1, ...). Whether a claim is reproduced is the claims engine's job
	// (`mage claims`); this is only the map from targets to claims.
	Claims []string
}

// Study titles, as the studies are cited in CITATION.cff.
var studyTitles = map[string]string{
	"tls":  `Study A: "Performance Impact of PQC/Hybrid Key Exchange in TLS 1.3" (Hara, Kawashima, Saito)`,
	"net":  `Study B: "Análise Comparativa de Performance entre Criptografia Clássica e Pós-Quântica no TLS 1.3" (Marques, Zavan, 2026)`,
	"pico": `Study C: "Benchmarking NIST-Standardised ML-KEM and ML-DSA on ARM Cortex-M0+: Performance, Memory, and Energy on the RP2040"`,
}

// A Claim is one published claim as the appendix lists it. The list
// comes from the studies' claim catalogues (each study's analysis
// package, gathered by internal/pipeline), the one list the paper's
// claims tables, `mage claims` and `mage all` show, so the IDs agree.
type Claim struct {
	ID        string // in the paper's scheme: A1a, B1, C1, ...
	Study     string // tls, net, pico
	Statement string // what the paper claims, in words
	Published string // the paper's value as it states it
}

// String is the claim as one line of the appendix.
func (c Claim) String() string {
	return c.ID + ": " + c.Statement + " (published: " + c.Published + ")"
}

// claimLines are the lines of a study's claims.
func claimLines(claims []Claim, study string) []string {
	var out []string
	for _, c := range claims {
		if c.Study == study {
			out = append(out, c.String())
		}
	}
	return out
}

// DefaultTargets describes the targets as the README documents them, each
// study's run with the given claims of its study. The pipeline fills in
// each study's Debian and npm packages from its requirements; what is
// known without them is here.
func DefaultTargets(claims []Claim) []Target {
	all := []string{"all claims of Studies A, B and C: the outputs every claim is evaluated on"}
	return []Target{
		{Name: "tls:run", Study: "tls", Doc: "Study A: capture TLS 1.3 handshakes on lo into a new dataset under data/tls", Root: true, Claims: claimLines(claims, "tls")},
		{Name: "net:run", Study: "net", Doc: "Study B: handshakes across emulated links (network namespaces, TUN) into data/net", Root: true, Claims: claimLines(claims, "net")},
		{Name: "pico:run", Study: "pico", Doc: "Study C: build the RP2040 firmware, run it on a Pico if attached, else in rp2040js, into data/pico",
			Hardware: "optional: a Raspberry Pi Pico (RP2040) on USB; without one the firmware runs in the rp2040js emulator", Claims: claimLines(claims, "pico")},
		{Name: "build", Doc: "rebuild the stale analysis, figure, table and paper stages from the pinned datasets", Claims: all},
		{Name: "verify", Doc: "re-hash SHA256SUMS and re-derive every output from the committed data in a temporary tree, byte for byte", Claims: all},
		{Name: "paper", Doc: "build paper/main.pdf and what it includes", Claims: all},
	}
}
