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
	// Claims are the published claims that the target's output bears on,
	// one line each, under the IDs of the paper's claims tables (A1a, B1,
	// C1, ...). Whether a claim is reproduced is the claims engine's job
	// (`mage claims`); this is only the map from targets to claims.
	Claims []string
}

// A Claim is one published claim as the appendix lists it. The list
// comes from the studies' claim catalogues (each study's analysis
// package, gathered by the composition root, package pipeline), the one
// list the paper's claims tables, `mage claims` and `mage all` show, so
// the IDs agree.
type Claim struct {
	ID        string // in the paper's scheme: A1a, B1, C1, ...
	Study     string // the study's short name (tls, net, pico)
	Statement string // what the paper claims, in words
	Published string // the paper's value as it states it
}

// String is the claim as one line of the appendix.
func (c Claim) String() string {
	return c.ID + ": " + c.Statement + " (published: " + c.Published + ")"
}

// ClaimLines are the lines of one study's claims, in the given order.
func ClaimLines(claims []Claim, study string) []string {
	var out []string
	for _, c := range claims {
		if c.Study == study {
			out = append(out, c.String())
		}
	}
	return out
}

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
