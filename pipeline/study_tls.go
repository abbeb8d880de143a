package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"pqrepro/experiments/instruments/rederive"
	"time"

	"pqrepro/analysis/agreement"
	"pqrepro/analysis/tlscrosshost"
	"pqrepro/analysis/tlsgapmodel"
	"pqrepro/analysis/tlsstudy"
	"pqrepro/experiments/instruments/sshhost"
	"pqrepro/experiments/tls/bridgenet"
	"pqrepro/experiments/tls/dockernet"
	"pqrepro/experiments/tls/openssl"
	"pqrepro/experiments/tls/tlsjoin"
	"pqrepro/experiments/tls/tlsrun"
	"pqrepro/internal/deps"
	"pqrepro/internal/repro"
	"pqrepro/internal/settings"
	"pqrepro/internal/spec"
	"pqrepro/reproduce"
)

func init() {
	studies = append(studies, Study{
		Name:  tlsrun.Study,
		Label: "A",
		// Two runs holding one identical file of these are copies.
		Timed:    []string{rederive.RecordsFile, rederive.InprocFile},
		Title:    "Study A: TLS 1.3 signature x key-exchange matrix on one host",
		Citation: `"Performance Impact of PQC/Hybrid Key Exchange in TLS 1.3" (Hara, Kawashima, Saito)`,
		Packages: []string{"experiments/tls/tlsrun", "datasets/tlsdata", "analysis/tlsstudy", "analysis/tlsgapmodel", "analysis/tlscrosshost", "analysis/tlshost", "analysis/tlscompare"},
		Targets: []TargetDoc{
			{Names: []string{"tls:run"},
				Does: "Study A: TLS 1.3 handshakes in the 14 cells of `experiments/tls.toml` (Go, our OpenSSL harness or OpenSSL's own s_server/s_client; loopback, a Docker-like bridge or a private Docker daemon's Compose network; direct or HelloRetryRequest) with packet captures, into a new run under `data/tls/` (root)"},
			{Names: []string{"tls:openssl"},
				Does: "builds Study A's second stack once into `.cache/openssl/`: Debian trixie's OpenSSL 3.5 source package (`apt-get source` through a private deb-src apt configuration under the cache, the pinned `.dsc` SHA-256 and the sums it lists checked), `./Configure linux-x86_64 no-shared no-tests no-docs && make build_programs` (the static libraries and the `openssl` program), then the C harness; later calls reuse the build"},
		},
		NeedsRoot:    true,
		Requirements: tlsrun.Requirements,
		// The OpenSSL stack's, the bridge path's, the docker path's and
		// the remote path's tests (Debian's openssh-server plays the
		// second host; docker.io and docker-compose the docker path's
		// private daemon and its compose tool).
		TestRequirements: func(string) []deps.Requirement {
			reqs := append(openssl.Requirements(), bridgenet.Requirements()...)
			reqs = append(reqs, dockernet.Requirements()...)
			return append(reqs, sshhost.TestRequirements()...)
		},
		// A fresh machine builds OpenSSL once before the first run.
		OneTime: func(root string) []OneTimeWork {
			if !tlsrun.NeedsOpenSSL(root) || openssl.Built(root) {
				return nil
			}
			return []OneTimeWork{{What: "build Debian's openssl " + openssl.Version + " source package into .cache/openssl", Estimate: openssl.BuildEstimate}}
		},
		// The OpenSSL stack's tests need the build; it is made once into
		// .cache/openssl (minutes) and reused.
		BeforeTests: func(ctx context.Context, cfg Config) error {
			cfg.printf("test: the OpenSSL stack of Study A (built once into .cache/openssl, minutes; reused afterwards)")
			return TLSOpenSSL(ctx, cfg)
		},
		// The docker path's run prefix (tlsrun's, "pqrd").
		Leftovers: tlsLeftovers(dockernet.DefaultPrefix),
		Clean:     tlsClean(dockernet.DefaultPrefix),
		CheckSpec: func(root string) error {
			_, err := tlsrun.LoadSpec(filepath.Join(root, spec.Path(tlsrun.Study)))
			return err
		},
		EstimateFor: func(root, profile string) time.Duration {
			return tlsrun.Estimates(root)[profile]
		},
		Run: func(ctx context.Context, cfg Config, specPath, dataDir string) (string, error) {
			return runID(tlsrun.Run(ctx, tlsrun.RunConfig{Config: cfg.lifeConfig(specPath, dataDir), Store: cfg.store()}))
		},
		// The numbers the paper may state literally about the study.
		HandTyped: tlsstudy.HandTyped,

		StagesFor: tlsStagesFor,
		Records:   tlsRecords,
		Claims:    tlsstudy.Claims,
		Results: resultsOf[tlsstudy.Results]{Decode: tlsstudy.DecodeResults, Items: tlsstudy.CompareItems,
			Changes: tlsstudy.CalibrationChanges, Resampler: tlsstudy.Resampler, Method: tlsstudy.ResampleMethod}.decode,
		Normalised: tlsNormalised,
		Plant:      tlsPlant,
		PlantName:  "ML-KEM-1024 slower by 1 ms in every round (claims A2a-A2c)",
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
func tlsStagesFor(root, profile, run string, set settings.Settings) ([]*repro.Stage, error) {
	s, err := tlsrun.LoadSpec(filepath.Join(root, spec.Path(tlsrun.Study)))
	if err != nil {
		return nil, err
	}
	d, err := s.Design(profile)
	if err != nil {
		return nil, err
	}
	p, err := tlsstudy.ParamsFrom(profile, d, set.SourceDateEpoch)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", spec.Path(tlsrun.Study), err)
	}
	// The gap model (analysis/tlsgapmodel) is a part of the stages: it
	// gets the emulated-path cells from tls:analyze and renders beside
	// the study's own outputs.
	st := tlsstudy.StagesFrom(run, recordsOut(tlsrun.Study, profile), p, tlsgapmodel.Part())
	repeats, err := reproduce.QuietRepeats(root, tlsrun.Study, profile, run)
	if err != nil {
		return nil, err
	}
	return append(st, tlsstudy.AlternativesStage(run, recordsOut(tlsrun.Study, profile), repeats, p)), nil
}

// tlsRecords re-derives a Study A run's records from its capture.
func tlsRecords(root, profile, run string, set settings.Settings) *repro.Stage {
	return recordsStage(root, tlsrun.Study, profile, run, "experiments/tls/tlsjoin", tlsjoin.Derive, set)
}

// tlsLeftovers lists what killed Study A runs left: the bridge path's
// network namespaces (tlsrun.NetnsPrefix, named the linkemu way) and the
// emulated paths' (tlsrun.EmulatedNetnsPrefix), what
// the docker path of dockerPrefix left (a private dockerd still running
// and its containers, networks and images, a bridge, a data root, a temp
// dir: dockernet.Leftovers) and PEM folders in the temporary directory
// (tlsrun.CertLeftovers).
func tlsLeftovers(dockerPrefix string) func() []Leftover {
	return func() []Leftover {
		docker, _ := dockernet.Leftovers(dockerPrefix)
		return []Leftover{
			netnsLeftovers("tls:run", tlsrun.NetnsPrefix),
			netnsLeftovers("tls:run", tlsrun.EmulatedNetnsPrefix),
			{What: "left by a killed run's docker path", Items: docker, RemovedBy: "clean"},
			{What: "temporary folders of killed runs", Items: tlsrun.CertLeftovers(), RemovedBy: "clean"},
		}
	}
}

// tlsClean removes what tlsLeftovers lists for target: for clean the
// docker path's leftovers (dockernet.Clean, within two minutes) and the
// PEM folders (tlsrun.RemoveCertLeftovers), for net:clean the bridge
// path's and the emulated paths' namespaces.
func tlsClean(dockerPrefix string) func(ctx context.Context, cfg Config, target string) ([]string, error) {
	return func(ctx context.Context, cfg Config, target string) ([]string, error) {
		switch target {
		case "net:clean":
			gone, err := netnsClean(cfg, tlsrun.NetnsPrefix)
			if err != nil {
				return gone, err
			}
			emu, err := netnsClean(cfg, tlsrun.EmulatedNetnsPrefix)
			return append(gone, emu...), err
		case "clean":
			ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
			gone, err := dockernet.Clean(ctx, dockerPrefix, nil)
			cancel()
			var removed []string
			for _, g := range gone {
				removed = append(removed, "docker: "+g)
			}
			if err != nil {
				return removed, err
			}
			certs, err := tlsrun.RemoveCertLeftovers()
			return append(removed, certs...), err
		}
		return nil, nil
	}
}

// TLSOpenSSL builds Study A's OpenSSL stack into .cache/openssl. It
// fetches Debian trixie's OpenSSL 3.5 source package (pinned, verified),
// runs Configure and make once (minutes; a later call reuses the build),
// then builds the C harness. It prints what meta.json will record about
// the build.
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

// tlsNormalised is Study A's items made comparable across hosts: each
// paper configuration's increase in the judged cell over the host's own
// predicted cryptographic increase (tlscrosshost.NormalisedIncreases).
func tlsNormalised(name string, b []byte) ([]agreement.Normalised, error) {
	r, err := tlsstudy.DecodeResults(name, b)
	if err != nil {
		return nil, err
	}
	ns, err := tlscrosshost.NormalisedIncreases(r)
	if err != nil {
		return nil, err
	}
	out := make([]agreement.Normalised, len(ns))
	for i, n := range ns {
		out[i] = agreement.Normalised{Name: fmt.Sprintf("%s increase in %s / host prediction", n.Role, r.Primary.Judged), Item: tlsstudy.PaperDifferenceItem(n.Role),
			Observed: n.ObservedMs, Predicted: n.PredictedMs, Ratio: n.Ratio, NotJudged: n.NotJudged}
	}
	return out, nil
}

// tlsPlant is a run's results with ML-KEM-1024's paper comparison 1 ms
// slower in every round (tlsstudy.PlantIncrease): the change the
// calibration of the whole verdict line must notice across hosts, where
// A2a rests on a flip.
func tlsPlant(b []byte) ([]byte, error) {
	r, err := tlsstudy.DecodeResults("results/tls.json", b)
	if err != nil {
		return nil, err
	}
	if err := tlsstudy.PlantIncrease(r, "pq-kem", 1); err != nil {
		return nil, err
	}
	return json.Marshal(r)
}
