package tlsstudy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"path"

	"pqrepro/analysis/claims"
	"pqrepro/analysis/stats"
	"pqrepro/analysis/tlscompare"
	"pqrepro/datasets/tlsdata"
	"pqrepro/internal/repro"
)

// AlternativesFile holds Study A's results under each other
// specification the committed data allow (claims.Alternatives).
const AlternativesFile = "results/tls-alternatives.json"

const stageAlternatives = "tls:alternatives"

// AlternativesStage writes AlternativesFile: the paper family of other
// analyses of Study A's data. Those are every other complete cell of the
// pinned run, the run re-analysed with Ths from SYN, and each quiet repeat
// run (repeats, run folders).
//
// It reuses Analyze; derived is the pinned run's records file as the
// build re-derives it, so the Ths definitions read the same rows.
func AlternativesStage(runDir, derived string, repeats []string, p Params) *repro.Stage {
	inputs := []string{ResultsFile, derived}
	params := p.stageParams()
	for i, r := range repeats {
		inputs = append(inputs, path.Join(r, recordsInFile))
		params[fmt.Sprintf("repeat.%d", i)] = r
	}
	return &repro.Stage{
		Name:    stageAlternatives,
		Doc:     "Study A under other cells, Ths definitions and repeat runs",
		Code:    []string{codeDir},
		Inputs:  inputs,
		Params:  params,
		Outputs: []string{AlternativesFile},
		Run: func(ctx context.Context, env *repro.Env) error {
			pp, err := paramsFrom(env.Param)
			if err != nil {
				return err
			}
			rb, err := env.ReadFile(ResultsFile)
			if err != nil {
				return err
			}
			res, err := DecodeResults(ResultsFile, rb)
			if err != nil {
				return err
			}
			var out claims.Alternatives
			cells, err := CellAlternatives(res)
			if err != nil {
				return err
			}
			out.Alternatives = append(out.Alternatives, cells...)
			read := func(file string) ([]tlsdata.Record, error) {
				b, err := env.ReadFile(file)
				if err != nil {
					return nil, err
				}
				return tlsdata.ReadRecords(bytes.NewReader(b), file)
			}
			recs, err := read(derived)
			if err != nil {
				return err
			}
			for _, d := range ThsDefinitions {
				out.Alternatives = append(out.Alternatives, analysed(claims.KindThs, d.Name, func() (*Results, error) {
					rs, err := d.Apply(recs)
					if err != nil {
						return nil, err
					}
					return Analyze(rs, pp, Input{Path: path.Join(runDir, recordsInFile)})
				}))
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			for _, r := range repeats {
				out.Alternatives = append(out.Alternatives, analysed(claims.KindRun, path.Base(r), func() (*Results, error) {
					rs, err := read(path.Join(r, recordsInFile))
					if err != nil {
						return nil, err
					}
					return Analyze(rs, pp, Input{Path: path.Join(r, recordsInFile)})
				}))
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			b, err := marshalAlternatives(out)
			if err != nil {
				return err
			}
			return env.WriteFile(AlternativesFile, b)
		},
	}
}

// analysed is one alternative from an analysis, or the error as its
// missing reason.
func analysed(kind, name string, analyse func() (*Results, error)) claims.Alternative {
	res, err := analyse()
	if err != nil {
		return claims.Alternative{Kind: kind, Name: name, Missing: err.Error()}
	}
	if !res.Primary.Judgeable() {
		return claims.Alternative{Kind: kind, Name: name, Missing: res.Primary.Note}
	}
	b, err := MarshalResults(paperOnly(res, res.Families["paper"]))
	if err != nil {
		return claims.Alternative{Kind: kind, Name: name, Missing: err.Error()}
	}
	if res.Primary.Status != PrimaryStated {
		name += " (judged on " + res.Primary.Judged.String() + ")"
	}
	return claims.Alternative{Kind: kind, Name: name, Results: b}
}

// paperOnly is res reduced to what the claims read: the primary choice
// and the paper family f.
func paperOnly(res *Results, f *Family) *Results {
	nan := Num(math.NaN())
	if f != nil {
		f = &Family{Baseline: f.Baseline, Configs: f.Configs, Comparisons: f.Comparisons,
			Friedman: tlscompare.Friedman{P: nan, Q: nan, KendallW: nan}, Kruskal: Kruskal{P: nan, H: nan, Epsilon2: nan}}
	}
	return &Results{Schema: res.Schema, Study: res.Study, Profile: res.Profile, Primary: res.Primary,
		Families: map[string]*Family{"paper": f}}
}

// CellAlternatives are the pinned run's results as if each other complete
// cell were the primary one: its paper comparisons become the paper
// family's. The cells are gap.cells' and the emulated paths' per-config
// ones (gap.emulated).
func CellAlternatives(res *Results) ([]claims.Alternative, error) {
	var out []claims.Alternative
	for _, c := range res.Gap.Cells {
		if c.Primary {
			continue
		}
		name := c.Cell.String()
		if len(c.Missing) > 0 || len(c.Comparisons) == 0 {
			out = append(out, claims.Alternative{Kind: claims.KindCell, Name: name, Missing: fmt.Sprintf("the cell lacks %v", c.Missing)})
			continue
		}
		f := &Family{Baseline: c.Baseline, Comparisons: c.Comparisons}
		b, err := MarshalResults(paperOnly(res, f))
		if err != nil {
			return nil, err
		}
		out = append(out, claims.Alternative{Kind: claims.KindCell, Name: name, Results: b})
	}
	for _, e := range res.Gap.Emulated {
		if !e.complete() {
			out = append(out, claims.Alternative{Kind: claims.KindCell, Name: e.Name(), Missing: fmt.Sprintf("the cell lacks %v", e.Missing)})
			continue
		}
		b, err := MarshalResults(paperOnly(res, &Family{Baseline: e.Baseline, Comparisons: e.Comparisons}))
		if err != nil {
			return nil, err
		}
		out = append(out, claims.Alternative{Kind: claims.KindCell, Name: e.Name(), Results: b})
	}
	return out, nil
}

// A ThsDefinition is another reading of a handshake's time from the
// captured timestamps the records carry.
type ThsDefinition struct {
	Name string
	// Apply returns the records with ThsNs (and the timestamps it is the
	// difference of) set by the definition.
	Apply func([]tlsdata.Record) ([]tlsdata.Record, error)
}

// ThsDefinitions are the alternatives to the stated ClientHello -> client
// Finished that the records allow: SYN -> client Finished, SYN -> FIN.
var ThsDefinitions = []ThsDefinition{
	{Name: "SYN -> client Finished", Apply: func(rs []tlsdata.Record) ([]tlsdata.Record, error) {
		return redefine(rs, "syn_ns", func(r *tlsdata.Record) (*int64, *int64) { return r.SynNs, r.ClientFinishedNs })
	}},
	{Name: "SYN -> FIN", Apply: func(rs []tlsdata.Record) ([]tlsdata.Record, error) {
		return redefine(rs, "fin_ns", func(r *tlsdata.Record) (*int64, *int64) { return r.SynNs, r.FinNs })
	}},
}

// redefine sets each measured record's ThsNs to end - start (ClientHelloNs
// and ClientFinishedNs moved with it, so the record stays consistent); a
// measured record without either timestamp is an error naming col.
func redefine(rs []tlsdata.Record, col string, span func(*tlsdata.Record) (*int64, *int64)) ([]tlsdata.Record, error) {
	out := make([]tlsdata.Record, len(rs))
	copy(out, rs)
	for i := range out {
		r := &out[i]
		if r.ThsNs == nil {
			continue
		}
		s, e := span(r)
		if s == nil || e == nil {
			if r.Warmup {
				continue
			}
			return nil, fmt.Errorf("seq %d has no %s: the records do not carry this definition", r.Seq, col)
		}
		start, end := *s, *e
		d := end - start
		r.ClientHelloNs, r.ClientFinishedNs, r.ThsNs = &start, &end, &d
	}
	return out, nil
}

// FirstRules are Study A's rules as first written (4683144), for the
// claims whose rule changed since. Those rules are significance over
// handshakes with Holm over the paper's three Mann-Whitney tests, and the
// absolute increases of the medians within ±50 %, direction only outside
// it.
func FirstRules() []claims.FirstRule {
	const commit = "4683144a9f5d89667d58bd7987e5026ee89fed20"
	var out []claims.FirstRule
	for i, role := range Roles[1:] {
		id := fmt.Sprintf("A%d", i+1)
		pub := Published.Increases[role]
		out = append(out,
			claims.FirstRule{ID: id + "a", Commit: commit, Text: "median higher and Holm-adjusted p < 0.05 (Mann-Whitney over handshakes)",
				Eval: claims.On("tls", func(r *Results) claims.Outcome {
					f, err := paperFamily(r)
					if err != nil {
						return claims.Unmeasurable(err)
					}
					var ps []float64
					var c *Comparison
					for j := range f.Comparisons {
						ps = append(ps, float64(f.Comparisons[j].MannWhitney.P))
						if f.Comparisons[j].Role == role {
							c = &f.Comparisons[j]
						}
					}
					if c == nil {
						return claims.Unmeasurable(claims.Missing("tls", "families.paper.comparisons[role="+role+"]", "no element"))
					}
					adj := stats.Holm(ps)
					p := adj[paperIndex(f.Comparisons, role)]
					o := claims.Outcome{Ours: fmt.Sprintf("%+.3f ms, p_Holm %s", float64(c.MedianDiffMs), claims.PValue(p)), Verdict: claims.Reproduced}
					if !(float64(c.MedianDiffMs) > 0 && p < claims.Alpha) {
						o.Verdict = claims.NotReproduced
					}
					return o
				})},
			claims.FirstRule{ID: id + "c", Commit: commit, Text: "median increase within ±50 % (direction only outside it)",
				Eval: claims.On("tls", func(r *Results) claims.Outcome {
					c, _, err := paperComparison(r, role)
					if err != nil {
						return claims.Unmeasurable(err)
					}
					return firstJudgeValue(float64(c.MedianDiffMs), pub.IncreaseMs, 0.5)
				})},
		)
	}
	return out
}

func paperIndex(cs []Comparison, role string) int {
	for i := range cs {
		if cs[i].Role == role {
			return i
		}
	}
	return -1
}

// firstJudgeValue is the first rules' judgeValue: within tol reproduced,
// outside it with the published sign direction only, else not reproduced.
func firstJudgeValue(ours, published, tol float64) claims.Outcome {
	o := claims.JudgeValue(ours, published, tol, func(x float64) string { return fmt.Sprintf("%+.3f ms", x) })
	if o.Verdict == claims.NotReproduced && o.Direction == claims.AsPublished {
		o.Verdict = claims.DirectionOnly
	}
	return o
}

// marshalAlternatives is the alternatives file's bytes, indented.
func marshalAlternatives(a claims.Alternatives) ([]byte, error) {
	b, err := json.MarshalIndent(a, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
