package tlsstudy

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"pqrepro/analysis/stats"
	"pqrepro/datasets/tlsdata"
)

// TestHostCostRepeatRuns re-measures the host's account (3 P-384
// operations with a direct key share, 4 after an HRR) on every committed
// Study A run whose meta.json holds host_crypto: the pinned run and the
// repeat runs of the other hosts. It prints, per run, the range of
// observed/predicted over the OpenSSL cells of each key-share mode and
// the median step from a direct cell to its HRR twin in P-384
// operations, and fails if a run's median step is nearer 0 or 2
// operations than 1 (the HRR's one extra client key generation). It
// reads every run (about 10 s), so it runs only when asked:
//
//	PQREPRO_HOSTCOST_RUNS=1 go test ./analysis/tlsstudy -run TestHostCostRepeatRuns -v
func TestHostCostRepeatRuns(t *testing.T) {
	if os.Getenv("PQREPRO_HOSTCOST_RUNS") == "" {
		t.Skip("set PQREPRO_HOSTCOST_RUNS=1 to re-measure the host account on every committed run")
	}
	dirs, err := filepath.Glob(filepath.Join("..", "..", "data", "tls", "*"))
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, d := range dirs {
		mb, err := os.ReadFile(filepath.Join(d, MetaFile))
		if err != nil {
			continue
		}
		meta, err := ParseRunMeta(d, mb)
		if err != nil {
			t.Fatal(err)
		}
		if meta.HostCrypto == nil || (meta.HostCrypto.Before == nil && meta.HostCrypto.After == nil) {
			continue
		}
		b, err := os.ReadFile(filepath.Join(d, "records.csv.gz"))
		if err != nil {
			t.Fatal(err)
		}
		recs, err := tlsdata.ReadRecords(bytes.NewReader(b), d)
		if err != nil {
			t.Fatal(err)
		}
		profile := "full"
		if strings.HasSuffix(d, "-quick") {
			profile = "quick"
		}
		p := DefaultParams(profile)
		p.BootstrapResamples = 200
		res, err := Analyze(recs, p, Input{Path: d})
		if err != nil {
			t.Fatal(err)
		}
		AttachMeta(res, p, meta)
		h := res.Host
		ratios := map[string][]float64{}
		obs := map[Cell]float64{}
		for _, c := range h.Cells {
			if c.Applies {
				ratios[c.KeyShare] = append(ratios[c.KeyShare], float64(c.Ratio))
				obs[c.Cell] = float64(c.ObservedMs)
			}
		}
		var steps []float64
		for c, o := range obs {
			if c.KeyShare == KeyShareDirect {
				twin := c
				twin.KeyShare = KeyShareHRR
				if oh, ok := obs[twin]; ok {
					steps = append(steps, (oh-o)/float64(h.P384Ms))
				}
			}
		}
		if len(steps) == 0 || len(ratios[KeyShareDirect]) == 0 || len(ratios[KeyShareHRR]) == 0 {
			continue
		}
		seen++
		step, _ := stats.Median(steps)
		t.Logf("%s: P-384 %.3f ms/op; observed/predicted direct %.2f-%.2f, HRR %.2f-%.2f; median HRR-direct step %.2f ops",
			filepath.Base(d), h.P384Ms, slices.Min(ratios[KeyShareDirect]), slices.Max(ratios[KeyShareDirect]),
			slices.Min(ratios[KeyShareHRR]), slices.Max(ratios[KeyShareHRR]), step)
		if math.Abs(step-1) > 0.5 {
			t.Errorf("%s: the HRR adds %.2f P-384 operations (median over the OpenSSL cells), want about 1", d, step)
		}
	}
	if seen == 0 {
		t.Fatal(fmt.Errorf("no committed run with host_crypto under data/tls"))
	}
}
