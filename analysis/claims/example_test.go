package claims_test

import (
	"fmt"

	"pqrepro/analysis/claims"
)

// The stated specification holds and one of three alternatives fails:
// the claim is fragile.
func ExampleLabel() {
	k, n, label := claims.Label(claims.Reproduced, []claims.Verdict{claims.Reproduced, claims.NotReproduced, claims.NotMeasurable})
	fmt.Println(k, "of", n, label)
	// Output: 2 of 3 fragile
}

// Curves judges a counted claim in its stated specification and in each
// alternative of its study; a study with none gives "1 of 1, no
// alternative".
func ExampleCurves() {
	within := func(study string) func(*claims.Results) claims.Outcome {
		return func(r *claims.Results) claims.Outcome {
			v, err := claims.Of[struct{ Ms float64 }](r, study)
			if err != nil {
				return claims.Unmeasurable(err)
			}
			return claims.JudgeMagnitude(v.Ms, 5, 0.25, claims.Ms)
		}
	}
	catalogue := []claims.Claim{
		{ID: "A", Study: "a", Measures: "increase", Eval: within("a")},
		{ID: "B", Study: "b", Measures: "increase", Eval: within("b")},
	}
	files := map[string][]byte{"a": []byte(`{"Ms": 5.2}`), "b": []byte(`{"Ms": 4.5}`)}
	alts := map[string]claims.Alternatives{"a": {Alternatives: []claims.Alternative{
		{Kind: claims.KindCell, Name: "other cell", Results: []byte(`{"Ms": 5.9}`)},
		{Kind: claims.KindRun, Name: "repeat run", Results: []byte(`{"Ms": 6.9}`)},
	}}}
	rep, err := claims.Curves(files, nil, catalogue, alts, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range rep.Curves {
		fmt.Printf("%s: %s, %s\n", c.ID, c.Label, c.Summary())
	}
	fmt.Println(claims.CurveSentence(rep))
	// Output:
	// A: fragile, holds in 2 of 3
	// B: robust, 1 of 1, no alternative
	// Of the 2 reproduced counted claims, 0 are robust (reproduced in every alternative specification the data hold) and 1 is fragile (reproduced as stated, not in every alternative); 1 is untested: no alternative specification could be judged.
}
