package picostudy

import (
	"fmt"
	"math"

	"pqrepro/internal/jsonnum"
	"pqrepro/internal/render"
)

// kcyc renders cycles in thousands, "---" when not separable (NaN).
func kcyc(x jsonnum.Num) string {
	if math.IsNaN(float64(x)) {
		return "---"
	}
	return render.GroupDigits(render.Fixed(float64(x)/1e3, 0), "{,}")
}

// signingTable renders each ML-DSA set's signing cost split by its
// rejection loop (SigningLoop): the mean and its spread beside the
// single-iteration minimum and what each step of an iteration costs. A
// run whose firmware did not count gets one row that says so.
func signingTable(r *Results) (string, error) {
	t := render.Table{Label: "tab:pico-signing", Align: "lrrrrrrrrrr",
		Caption: fmt.Sprintf("ML-DSA signing by its rejection loop: the mean of the signatures and their coefficient of variation, the mean iterations, the fewest cycles of a one-iteration signature, and the cycles each step adds, fitted over the signatures (kilocycles; %s)", source(r)),
		Header:  []string{"Scheme", "n", "Mean (kcyc)", "CV (\\%)", "Iterations", "One iteration, min (kcyc)", "Outside the loop", "Iteration to z", "$\\lVert r_0\\rVert$ step", "$\\lVert ct_0\\rVert$ step", "Hint step"}}
	if len(r.SigningLoops) == 0 {
		t.Rows = append(t.Rows, []string{"---", "---", "---", "---", "---", "---", "---", "---", "---", "---", "---"})
		t.Notes = "--- : not measured in this run: its firmware did not count the rejection loop (firmware dsacount.h; runs after it do)."
		return t.Latex()
	}
	worst := 0.0
	for _, l := range r.SigningLoops {
		one := kcyc(l.OneIterMinCycles)
		if l.OneIterN > 0 {
			one += fmt.Sprintf(" (%d)", l.OneIterN)
		}
		t.Rows = append(t.Rows, []string{render.Escape(displayName(l.Scheme)), fmt.Sprint(l.N), kcyc(l.MeanCycles), render.Fixed(float64(l.CVPct), 0),
			render.Fixed(float64(l.MeanIters), 2), one, kcyc(l.BaseCycles), kcyc(l.IterCycles), kcyc(l.R0Cycles), kcyc(l.Ct0Cycles), kcyc(l.HintCycles)})
		if !math.IsNaN(float64(l.MaxResidualPct)) {
			worst = max(worst, float64(l.MaxResidualPct))
		}
	}
	t.Notes = fmt.Sprintf("One iteration: in parentheses how many signatures needed only one. Steps: ordinary least squares of each signature's cycles on its counts (iterations; of them, how many reached the $\\lVert r_0\\rVert$ check, the $\\lVert ct_0\\rVert$ check and the hint); --- : the count did not vary in this run, or moved in step with an earlier count in every signature; its cost is in the columns before. Largest residual: %s\\,\\%% of a signature's cycles.", render.Fixed(worst, 2))
	return t.Latex()
}
