package netstudy

import (
	"context"
	"fmt"
	"math"
	"path"
	"strings"

	"pqrepro/datasets/netdata"
	"pqrepro/internal/render"
	"pqrepro/internal/repro"
)

// StageTTLB is the transfer block's stage (our extension, issue 34).
const StageTTLB = "net:ttlb"

// TexTTLB holds the transfer block's table and macros.
const TexTTLB = "paper/generated/net-ttlb.tex"

// ttlbStage reads the run's transfer.csv.gz (none in a run recorded
// before the block: every output then says NotMeasuredPinned) and the
// rounds' records (size 0), and writes TTLBFile and TexTTLB.
func ttlbStage(runDir, records string, params Params) *repro.Stage {
	metaFile := path.Join(runDir, netdata.MetaFile)
	return &repro.Stage{
		Name:    StageTTLB,
		Doc:     "Study B transfer block (our extension): the hybrid's time-to-last-byte increase per scenario and response size; Kampanakis and Childs-Klein's statements as our claims",
		Code:    []string{codeDir},
		Inputs:  []string{records, metaFile, path.Join(runDir, "*.csv.gz")},
		Params:  ttlbParams(runDir, params),
		Outputs: []string{TTLBFile, TexTTLB, FigTTLB + ".pdf", FigTTLB + ".svg"},
		Run: func(ctx context.Context, env *repro.Env) error {
			p, err := paramsFrom(env.Param)
			if err != nil {
				return err
			}
			mb, err := env.ReadFile(metaFile)
			if err != nil {
				return fmt.Errorf("read %s: %w", metaFile, err)
			}
			m, err := netdata.ParseMeta(metaFile, mb)
			if err != nil {
				return err
			}
			xfer, err := readTransfer(env.Inputs(), env.ReadFile, runDir)
			if err != nil {
				return fmt.Errorf("%s: %w; the run folder is immutable: record a new run", StageTTLB, err)
			}
			var rows []Row
			if len(xfer) > 0 {
				f, err := env.Open(records)
				if err != nil {
					return fmt.Errorf("read %s: %w", records, err)
				}
				defer f.Close()
				if rows, err = ReadRecords(f, records); err != nil {
					return fmt.Errorf("read dataset: %w", err)
				}
			}
			t, err := AnalyzeTTLB(m.Measured.Design, xfer, rows, p)
			if err != nil {
				return fmt.Errorf("%s: %w", StageTTLB, err)
			}
			b, err := encodeTTLB(t)
			if err != nil {
				return err
			}
			if err := env.WriteFile(TTLBFile, b); err != nil {
				return err
			}
			tex, err := ttlbTeX(t)
			if err != nil {
				return fmt.Errorf("%s: %w", StageTTLB, err)
			}
			if err := env.WriteFile(TexTTLB, []byte(tex)); err != nil {
				return err
			}
			date, err := parseDate(env.Param("source_date_epoch"))
			if err != nil {
				return fmt.Errorf("%s: %w", StageTTLB, err)
			}
			figs, err := ttlbFigures(t, date)
			if err != nil {
				return fmt.Errorf("%s: %w", StageTTLB, err)
			}
			for _, ext := range []string{".pdf", ".svg"} {
				if err := env.WriteFile(FigTTLB+ext, figs[FigTTLB+ext]); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

// ttlbParams are the analysis' parameters and the figures' date.
func ttlbParams(runDir string, params Params) map[string]string {
	m := params.analysisParams(runDir)
	m["source_date_epoch"] = params.sourceDateParam()
	return m
}

// sizeLabel names a response size for the table: 0 (handshake only),
// KiB or MiB.
func sizeLabel(n int) string {
	switch {
	case n == 0:
		return "0"
	case n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n%1024 == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d B", n)
}

func pct(v Num) string {
	if math.IsNaN(float64(v)) {
		return "---"
	}
	return render.Fixed(float64(v), 1)
}

// ttlbTeX renders the table (tab:net-ttlb) and the macros: \NetTtlbStatus
// (measured, or NotMeasuredPinned), per scenario role and size
// \NetTtlbRelPct<Role><Size>, \NetTtlbDiffMs<Role><Size> and the fastest
// scenario's \NetTtlbHsRelPct<Size>, per role \NetTtlbBelowFive<Role> and
// \NetTtlbBelowOne<Role>, and per extension claim \NetTtlbVerdict<ID>.
func ttlbTeX(t *TTLBResults) (string, error) {
	var n render.Numbers
	var errs []error
	set := func(name, v string) {
		if err := n.Set("NetTtlb"+name, v); err != nil {
			errs = append(errs, err)
		}
	}
	status := "measured"
	if !t.Measured {
		status = NotMeasuredPinned
	}
	set("Status", render.Escape(status))
	for _, c := range t.Claims {
		set("Verdict"+macroSuffix(c.ID), render.Escape(c.Verdict))
	}
	role := func(sc string) string { r, _, _ := strings.Cut(sc, "-"); return macroSuffix(r) }
	var b strings.Builder
	b.WriteString("% Study B transfer block: our extension (issue 34), not the original's design.\n")
	b.WriteString(n.Latex())
	b.WriteString("\\begin{table}[t]\n\\centering\n\\caption{Our extension of Study B (not the original's design): the hybrid's increase of the time to last byte (ClientHello to the response's last byte) over X25519 by response size, beside the handshake's increase on the same connections; size 0 is the handshake-only connection. Intervals: 95~\\%, block bootstrap of each series.}\n\\label{tab:net-ttlb}\n\\footnotesize\n\\setlength{\\tabcolsep}{4pt}\n")
	b.WriteString("\\begin{tabular}{llrrrrrr}\n\\toprule\nscenario & size & X25519 (ms) & hybrid (ms) & $+$ms & $+$\\% & interval (\\%) & handshake $+$\\% \\\\\n\\midrule\n")
	if !t.Measured {
		b.WriteString("\\multicolumn{8}{p{0.8\\linewidth}}{\\centering " + render.Escape(NotMeasuredPinned) + "} \\\\\n")
	}
	var m render.Numbers
	mset := func(name, v string) {
		if err := m.Set("NetTtlb"+name, v); err != nil {
			errs = append(errs, err)
		}
	}
	for _, c := range t.Cells {
		sz := macroSuffix(strings.ReplaceAll(sizeLabel(c.SizeBytes), " ", ""))
		mset("RelPct"+role(c.Scenario)+sz, pct(c.RelPct))
		mset("DiffMs"+role(c.Scenario)+sz, ms(c.DiffMs))
		if c.Scenario == t.Fastest {
			mset("HsRelPct"+sz, pct(c.HsRelPct))
		}
		iv := "---"
		if !math.IsNaN(float64(c.RelLowerPct)) {
			iv = "[" + pct(c.RelLowerPct) + ", " + pct(c.RelUpperPct) + "]"
		}
		fmt.Fprintf(&b, "%s & %s & %s & %s & %s & %s & %s & %s \\\\\n", render.Escape(c.Scenario), sizeLabel(c.SizeBytes),
			ms(c.BaseMs), ms(c.TargetMs), ms(c.DiffMs), pct(c.RelPct), iv, pct(c.HsRelPct))
	}
	for _, sc := range t.Scenarios {
		for name, mp := range map[string]map[string]int{"BelowFive": t.Below5, "BelowOne": t.Below1} {
			v := "none"
			if s := mp[sc]; s >= 0 {
				v = sizeLabel(s)
			}
			mset(name+role(sc), v)
		}
	}
	b.WriteString("\\bottomrule\n\\end{tabular}\n\\end{table}\n")
	if len(errs) > 0 {
		return "", fmt.Errorf("%v", errs)
	}
	if t.Measured {
		b.WriteString(strings.TrimPrefix(m.Latex(), "% Generated by pqrepro; do not edit.\n"))
	}
	return b.String(), nil
}
