package pipeline

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"time"

	"pqrepro/analysis/claims"
	"pqrepro/analysis/tlsstudy"
	"pqrepro/experiments/instruments/handshake"
	"pqrepro/experiments/instruments/sshhost"
	"pqrepro/experiments/tls/bridgenet"
	"pqrepro/experiments/tls/openssl"
	"pqrepro/experiments/tls/tlsjoin"
	"pqrepro/experiments/tls/tlsrun"
	"pqrepro/internal/deps"
	"pqrepro/internal/repro"
	"pqrepro/internal/spec"
)

func init() {
	studies = append(studies, Study{
		Name:     tlsrun.Study,
		Label:    "A",
		Title:    "Study A: TLS 1.3 signature x key-exchange matrix on one host",
		Citation: `"Performance Impact of PQC/Hybrid Key Exchange in TLS 1.3" (Hara, Kawashima, Saito)`,
		Packages: []string{"experiments/tls/tlsrun", "datasets/tlsdata", "analysis/tlsstudy"},
		Targets: []TargetDoc{
			{Names: []string{"tls:run"},
				Does: "Study A: TLS 1.3 handshakes in 8 cells (Go or OpenSSL, loopback or a Docker-like bridge, direct or HelloRetryRequest) with packet captures, into a new run under `data/tls/` (root)"},
			{Names: []string{"tls:openssl"},
				Does: "builds Study A's second stack once into `.cache/openssl/`: Debian trixie's OpenSSL 3.5 source package (`apt-get source` through a private deb-src apt configuration under the cache, the pinned `.dsc` SHA-256 and the sums it lists checked), `./Configure linux-x86_64 no-shared no-tests no-docs && make build_libs`, then the C harness; later calls reuse the build"},
		},
		NeedsRoot:    true,
		Requirements: tlsrun.Requirements,
		// The OpenSSL stack's, the bridge path's and the remote path's
		// tests (Debian's openssh-server plays the second host).
		TestRequirements: func(string) []deps.Requirement {
			return append(append(openssl.Requirements(), bridgenet.Requirements()...), sshhost.TestRequirements()...)
		},
		// The OpenSSL stack's tests need the build; it is made once into
		// .cache/openssl (minutes) and reused.
		BeforeTests: func(ctx context.Context, cfg Config) error {
			cfg.printf("test: the OpenSSL stack of Study A (built once into .cache/openssl, minutes; reused afterwards)")
			return TLSOpenSSL(ctx, cfg)
		},
		NetnsPrefixes: []string{tlsrun.NetnsPrefix},
		EstimateFor: func(root, profile string) time.Duration {
			return tlsrun.Estimates(root)[profile]
		},
		Run: func(ctx context.Context, cfg Config, specPath, dataDir string) error {
			_, err := tlsrun.Run(ctx, tlsrun.RunConfig{Root: cfg.Root, Git: cfg.Git, Profile: cfg.Profile, Log: cfg.log(), Verbose: cfg.Verbose, Now: cfg.Now, SpecPath: specPath, DataDir: dataDir})
			return err
		},
		// The numbers the paper may state literally about the study.
		HandTyped: tlsstudy.HandTyped,

		StagesFor: tlsStagesFor,
		Records:   tlsRecords,
		Claims:    tlsstudy.Claims,
		Compare:   compareWith(compareTLS),
		// The capture needs an AF_PACKET socket: root or CAP_NET_RAW.
		CannotRun: func(string) string {
			if err := tlsrun.CheckPermission(); err != nil {
				return "cannot capture packets (AF_PACKET needs root or CAP_NET_RAW): " + err.Error()
			}
			return ""
		},
	})
}

// tlsStagesFor are Study A's analysis stages over a run folder, with the
// paper's configurations taken from experiments/tls.toml.
func tlsStagesFor(root, profile, run string) ([]*repro.Stage, error) {
	s, err := tlsrun.LoadSpec(filepath.Join(root, spec.Path(tlsrun.Study)))
	if err != nil {
		return nil, err
	}
	p := tlsstudy.DefaultParams(profile)
	p.Paper = nil
	for _, role := range tlsstudy.Roles {
		var found *tlsrun.PaperConfig
		for i := range s.Paper.Configs {
			if s.Paper.Configs[i].Name == role {
				found = &s.Paper.Configs[i]
			}
		}
		if found == nil {
			return nil, fmt.Errorf("%s: [[paper.configs]] has no configuration named %q", spec.Path(tlsrun.Study), role)
		}
		key, err := handshake.ParseCertKey(found.CertKey)
		if err != nil {
			return nil, err
		}
		group, err := handshake.ParseGroup(found.Group)
		if err != nil {
			return nil, err
		}
		p.Paper = append(p.Paper, tlsrun.ConfigName(key, group, s.Matrix.Chain))
	}
	p.Baseline = p.Paper[0]
	c := s.PrimaryCell(profile)
	p.Cell = tlsstudy.Cell{Stack: c.Stack, Path: c.Path, KeyShare: c.KeyShare}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return append([]*repro.Stage{tlsRecords(root, profile, run)}, tlsstudy.StagesFrom(run, recordsOut(tlsrun.Study, profile), p)...), nil
}

// compareTLS compares Study A's matrix family (every configuration
// against the baseline, Holm) and its gap analysis.
func compareTLS(it *items, ref, now *tlsstudy.Results) {
	if rf := ref.Families["matrix"]; rf != nil {
		var nc []tlsstudy.Comparison
		if nf := now.Families["matrix"]; nf != nil {
			nc = nf.Comparisons
		}
		for _, c := range rf.Comparisons {
			n := find(nc, func(n *tlsstudy.Comparison) bool { return n.Target == c.Target })
			if n == nil {
				it.absent(c.Target)
				continue
			}
			it.effect(c.Target+" vs baseline", "p_holm", "p_Holm", float64(c.MedianDiffMs), float64(c.PHolm), float64(n.MedianDiffMs), float64(n.PHolm))
			it.median(c.Target+" median ms", "median_target_ms", float64(c.MedianTargetMs), float64(n.MedianTargetMs), reproduceMedianTol)
		}
	}
	if ref.Gap != nil {
		ng := now.Gap
		if ng == nil {
			ng = &tlsstudy.Gap{}
		}
		compareGap(it, ref.Gap, ng)
	}
}

// compareGap compares Study A's gap analysis (analysis/tlsstudy): every
// cell's increases of the paper's configurations, by compareEffect; and
// every factor change the reference finds significant, which the new run
// contradicts only when its interval lies wholly on the other side of
// zero (a quick run's intervals are wide: a change it cannot resolve is
// inconclusive, not a contradiction).
func compareGap(it *items, ref, now *tlsstudy.Gap) {
	for _, rc := range ref.Cells {
		name := rc.Cell.String()
		nc := find(now.Cells, func(n *tlsstudy.CellResult) bool { return n.Cell == rc.Cell })
		for _, ro := range rc.Comparisons {
			item := fmt.Sprintf("cell %s %s vs baseline", name, ro.Role)
			var no *tlsstudy.Comparison
			if nc != nil {
				no = find(nc.Comparisons, func(n *tlsstudy.Comparison) bool { return n.Role == ro.Role })
			}
			if no == nil {
				it.absent(item)
				continue
			}
			it.effect(item, "p_holm", "p_Holm", float64(ro.MedianDiffMs), float64(ro.PHolm), float64(no.MedianDiffMs), float64(no.PHolm))
		}
	}
	for _, rf := range ref.Factors {
		nf := find(now.Factors, func(n *tlsstudy.FactorResult) bool { return n.Factor == rf.Factor })
		for _, re := range rf.Effects {
			item := fmt.Sprintf("%s %s -> %s %s change", rf.Factor, re.From, re.To, re.Role)
			if math.IsNaN(float64(re.PHolm)) {
				it.add(item, "p_holm null", "-", inconclusive, "the reference run has no p_holm for the change (null): no direction to reproduce")
				continue
			}
			if !(float64(re.PHolm) < claims.Alpha) {
				continue // the reference finds no change: no direction to reproduce
			}
			var ne *tlsstudy.FactorEffect
			if nf != nil {
				ne = find(nf.Effects, func(n *tlsstudy.FactorEffect) bool { return n.Role == re.Role && n.From == re.From })
			}
			if ne == nil {
				it.absent(item)
				continue
			}
			rd, nd, lo, hi := float64(re.ChangeMs), float64(ne.ChangeMs), float64(ne.Lower), float64(ne.Upper)
			if it.null(item, []string{"change_ms", "lower", "upper"}, []float64{rd, 0, 0}, []float64{nd, lo, hi}) {
				continue
			}
			o, why := agrees, "the new interval includes the reference's direction"
			switch {
			case (rd > 0 && hi < 0) || (rd < 0 && lo > 0):
				o, why = differs, "the new interval lies wholly on the other side of zero"
			case lo <= 0 && hi >= 0:
				o, why = inconclusive, "the new interval includes zero"
			}
			it.add(item, fmt.Sprintf("%+.3f ms", rd), fmt.Sprintf("%+.3f ms [%+.3f, %+.3f]", nd, lo, hi), o, why)
		}
	}
}

// tlsRecords re-derives a Study A run's records from its capture.
func tlsRecords(root, profile, run string) *repro.Stage {
	return recordsStage(root, tlsrun.Study, profile, run, "experiments/tls/tlsjoin", tlsjoin.Derive)
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
