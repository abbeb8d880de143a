package pipeline

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"time"

	"pqrepro/analysis/claims"
	atls "pqrepro/analysis/tlsmatrix"
	"pqrepro/experiments/bridgenet"
	"pqrepro/experiments/handshake"
	"pqrepro/experiments/openssl"
	"pqrepro/experiments/tlsjoin"
	"pqrepro/experiments/tlsmatrix"
	"pqrepro/internal/deps"
	"pqrepro/internal/repro"
	"pqrepro/internal/spec"
)

func init() {
	studies = append(studies, Study{
		Name:     tlsmatrix.Study,
		Label:    "A",
		Title:    "Study A: TLS 1.3 signature x key-exchange matrix on one host",
		Citation: `"Performance Impact of PQC/Hybrid Key Exchange in TLS 1.3" (Hara, Kawashima, Saito)`,
		Packages: []string{"experiments/tlsmatrix", "datasets/tlsdata", "analysis/tlsmatrix"},
		Targets: []TargetDoc{
			{Names: []string{"tls:run"},
				Does: "Study A: TLS 1.3 handshakes in 8 cells (Go or OpenSSL, loopback or a Docker-like bridge, direct or HelloRetryRequest) with packet captures, into a new run under `data/tls/` (root)",
				Time: "quick about 6 s (1,728 handshakes); full about 2 minutes (36,880; captures about 400 MB, to the content store)"},
			{Names: []string{"tls:openssl"},
				Does: "builds Study A's second stack once into `.cache/openssl/`: Debian trixie's OpenSSL 3.5 source package (`apt-get source` through a private deb-src apt configuration under the cache, the pinned `.dsc` SHA-256 and the sums it lists checked), `./Configure linux-x86_64 no-shared no-tests no-docs && make build_libs`, then the C harness; later calls reuse the build",
				Time: "16.6 min once (996 s for Configure and make, 2 cores shared with a load of about 17; expect about 6 min on an idle 2-core machine); 0.9 s after (the build and the harness reused)"},
		},
		NeedsRoot:    true,
		Requirements: tlsmatrix.Requirements,
		// The OpenSSL stack's and the bridge path's tests.
		TestRequirements: func(string) []deps.Requirement {
			return append(openssl.Requirements(), bridgenet.Requirements()...)
		},
		// The OpenSSL stack's tests need the build; it is made once into
		// .cache/openssl (minutes) and reused.
		BeforeTests: func(ctx context.Context, cfg Config) error {
			cfg.printf("test: the OpenSSL stack of Study A (built once into .cache/openssl, minutes; reused afterwards)")
			return TLSOpenSSL(ctx, cfg)
		},
		NetnsPrefixes: []string{tlsmatrix.NetnsPrefix},
		EstimateFor: func(root, profile string) time.Duration {
			return tlsmatrix.Estimates(root)[profile]
		},
		Run: func(ctx context.Context, cfg Config, specPath, dataDir string) error {
			_, err := tlsmatrix.Run(ctx, tlsmatrix.RunConfig{Root: cfg.Root, Git: cfg.Git, Profile: cfg.Profile, Log: cfg.log(), Verbose: cfg.Verbose, Now: cfg.Now, SpecPath: specPath, DataDir: dataDir})
			return err
		},
		StagesFor: tlsStagesFor,
		Records:   tlsRecords,
		Claims:    catalogueClaims(tlsmatrix.Study),
		Compare:   compareTLS,
		// The capture needs an AF_PACKET socket: root or CAP_NET_RAW.
		CannotRun: func(string) string {
			if err := tlsmatrix.CheckPermission(); err != nil {
				return "cannot capture packets (AF_PACKET needs root or CAP_NET_RAW): " + err.Error()
			}
			return ""
		},
	})
}

// tlsStagesFor are Study A's analysis stages over a run folder, with the
// paper's configurations taken from experiments/tls.toml.
func tlsStagesFor(root, profile, run string) ([]*repro.Stage, error) {
	s, err := tlsmatrix.LoadSpec(filepath.Join(root, spec.Path(tlsmatrix.Study)))
	if err != nil {
		return nil, err
	}
	p := atls.DefaultParams(profile)
	p.Paper = nil
	for _, role := range atls.Roles {
		var found *tlsmatrix.PaperConfig
		for i := range s.Paper.Configs {
			if s.Paper.Configs[i].Name == role {
				found = &s.Paper.Configs[i]
			}
		}
		if found == nil {
			return nil, fmt.Errorf("%s: [[paper.configs]] has no configuration named %q", spec.Path(tlsmatrix.Study), role)
		}
		key, err := handshake.ParseCertKey(found.CertKey)
		if err != nil {
			return nil, err
		}
		group, err := handshake.ParseGroup(found.Group)
		if err != nil {
			return nil, err
		}
		p.Paper = append(p.Paper, tlsmatrix.ConfigName(key, group, s.Matrix.Chain))
	}
	p.Baseline = p.Paper[0]
	c := s.PrimaryCell(profile)
	p.Cell = atls.Cell{Stack: c.Stack, Path: c.Path, KeyShare: c.KeyShare}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return append([]*repro.Stage{tlsRecords(root, profile, run)}, atls.StagesFrom(run, recordsOut(tlsmatrix.Study, profile), p)...), nil
}

// compareTLS compares two Study A runs: every comparison of the matrix
// with the baseline (direction and significance, and the target's
// median), then the gap analysis (compareGap).
func compareTLS(c *itemComparer) {
	for _, x := range c.list("ref", "families.matrix.comparisons") {
		target := fmt.Sprint(x.(map[string]any)["target"])
		path := "families.matrix.comparisons[target=" + target + "]."
		rd, _ := c.r.Num("ref", path+"median_diff_ms")
		rp, _ := c.r.Num("ref", path+"p_holm")
		nd, err1 := c.r.Num("new", path+"median_diff_ms")
		np, err2 := c.r.Num("new", path+"p_holm")
		if err1 != nil || err2 != nil {
			c.missing(target)
			continue
		}
		o, why := compareEffect(rd, rp, nd, np)
		c.add(target+" vs baseline", fmt.Sprintf("%+.3f ms, p_Holm %.2g", rd, rp), fmt.Sprintf("%+.3f ms, p_Holm %.2g", nd, np), o, why)
		rm, _ := c.r.Num("ref", path+"median_target_ms")
		nm, _ := c.r.Num("new", path+"median_target_ms")
		c.median(target+" median ms", rm, nm, reproduceMedianTol)
	}
	compareGap(c)
}

// compareGap compares Study A's gap analysis (analysis/tlsmatrix): every
// cell's increases of the paper's configurations, by compareEffect; and
// every factor change the reference finds significant, which the new run
// contradicts only when its interval lies wholly on the other side of
// zero (a quick run's intervals are wide: a change it cannot resolve is
// inconclusive, not a contradiction).
func compareGap(c *itemComparer) {
	refCells, newCells, refFactors, newFactors := c.list("ref", "gap.cells"), c.list("new", "gap.cells"), c.list("ref", "gap.factors"), c.list("new", "gap.factors")
	add := c.add
	cellName := func(m map[string]any) string { return fmt.Sprintf("%v/%v/%v", m["stack"], m["path"], m["keyshare"]) }
	find := func(l []any, match func(map[string]any) bool) map[string]any {
		for _, v := range l {
			if m, ok := v.(map[string]any); ok && match(m) {
				return m
			}
		}
		return nil
	}
	num := func(m map[string]any, k string) float64 {
		if v, ok := m[k].(float64); ok {
			return v
		}
		return math.NaN()
	}
	for _, c := range refCells {
		rc, _ := c.(map[string]any)
		name := cellName(rc)
		nc := find(newCells, func(m map[string]any) bool { return cellName(m) == name })
		comps, _ := rc["comparisons"].([]any)
		for _, x := range comps {
			ro, _ := x.(map[string]any)
			item := fmt.Sprintf("cell %s %v vs baseline", name, ro["role"])
			var no map[string]any
			if nc != nil {
				ncomps, _ := nc["comparisons"].([]any)
				no = find(ncomps, func(m map[string]any) bool { return m["role"] == ro["role"] })
			}
			if no == nil {
				add(item, "present", "missing", differs, "not in the new run")
				continue
			}
			rd, nd, rp, np := num(ro, "median_diff_ms"), num(no, "median_diff_ms"), num(ro, "p_holm"), num(no, "p_holm")
			o, why := compareEffect(rd, rp, nd, np)
			add(item, fmt.Sprintf("%+.3f ms, p_Holm %.2g", rd, rp), fmt.Sprintf("%+.3f ms, p_Holm %.2g", nd, np), o, why)
		}
	}
	for _, f := range refFactors {
		rf, _ := f.(map[string]any)
		nf := find(newFactors, func(m map[string]any) bool { return m["factor"] == rf["factor"] })
		effects, _ := rf["effects"].([]any)
		for _, e := range effects {
			re, _ := e.(map[string]any)
			if !(num(re, "p_holm") < claims.Alpha) {
				continue // the reference finds no change: no direction to reproduce
			}
			from, _ := re["from_cell"].(map[string]any)
			to, _ := re["to_cell"].(map[string]any)
			item := fmt.Sprintf("%v %s -> %s %v change", rf["factor"], cellName(from), cellName(to), re["role"])
			var ne map[string]any
			if nf != nil {
				neffects, _ := nf["effects"].([]any)
				ne = find(neffects, func(m map[string]any) bool {
					nfrom, _ := m["from_cell"].(map[string]any)
					return m["role"] == re["role"] && nfrom != nil && cellName(nfrom) == cellName(from)
				})
			}
			if ne == nil {
				add(item, "present", "missing", differs, "not in the new run")
				continue
			}
			rd, nd, lo, hi := num(re, "change_ms"), num(ne, "change_ms"), num(ne, "lower"), num(ne, "upper")
			o, why := agrees, "the new interval includes the reference's direction"
			switch {
			case (rd > 0 && hi < 0) || (rd < 0 && lo > 0):
				o, why = differs, "the new interval lies wholly on the other side of zero"
			case lo <= 0 && hi >= 0:
				o, why = inconclusive, "the new interval includes zero"
			}
			add(item, fmt.Sprintf("%+.3f ms", rd), fmt.Sprintf("%+.3f ms [%+.3f, %+.3f]", nd, lo, hi), o, why)
		}
	}
}

// tlsRecords re-derives a Study A run's records from its capture.
func tlsRecords(root, profile, run string) *repro.Stage {
	return recordsStage(root, tlsmatrix.Study, profile, run, "experiments/tlsjoin", tlsjoin.Derive)
}

// TLSOpenSSL builds Study A's OpenSSL stack into .cache/openssl: Debian
// trixie's OpenSSL 3.5 source package (pinned, verified), Configure and
// make once (minutes; a later call reuses the build), then the C harness.
// It prints what meta.json will record about the build.
func TLSOpenSSL(ctx context.Context, cfg Config) error {
	if err := cfg.installer().Ensure(ctx, openssl.Requirements()); err != nil {
		return fmt.Errorf("tls:openssl: %w", err)
	}
	t0 := time.Now()
	b, err := openssl.Ensure(ctx, cfg.Root, cfg.log())
	if err != nil {
		return fmt.Errorf("tls:openssl: %w", err)
	}
	bin, err := b.Harness(ctx, cfg.log())
	if err != nil {
		return fmt.Errorf("tls:openssl: %w", err)
	}
	cfg.printf("tls:openssl: OpenSSL %s from Debian %s %s (.dsc sha256 %s), %s && make %s: built once in %.0f s; harness %s; this call %s",
		b.OpenSSLVersion, b.Suite, b.Version, b.DscSHA256, b.Configure, b.MakeTarget, b.BuildSeconds, bin, time.Since(t0).Round(time.Millisecond))
	return nil
}
