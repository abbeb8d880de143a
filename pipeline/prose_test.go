package pipeline

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// Hand-written sentences of the paper that state a verdict or an order
// of measured quantities in words ("significantly slower", "the largest",
// "exceeds") around generated numbers. Their words are not generated, so
// this test checks each against the results: the verdicts of
// results/claims.json and the generated macros (which the build derives
// from results/*.json). When a sentence is reworded, its entry here must
// follow (the test fails when the words are gone), and when the data
// change so that the words are false, the test fails with the reason:
// rewrite the sentence, or generate its words.
//
// The sign words ("all positive", "changing sign") are checked in every
// sentence by the paper stage itself (paperbuild.checkSignWords).

// proseClaim is one hand-written statement, where it is, and what must
// hold for it to be true.
type proseClaim struct {
	file  string // relative to paper/
	words string // the statement, as the source spells it (white space normalised)
	holds func(p *proseData) error
}

// proseData is what the statements are checked against.
type proseData struct {
	verdicts map[string]string // claim ID -> verdict (results/claims.json)
	macros   map[string]string // generated macro -> value (paper/generated)
}

func (p *proseData) verdict(want string, ids ...string) error {
	for _, id := range ids {
		v, ok := p.verdicts[id]
		if !ok {
			return fmt.Errorf("results/claims.json has no claim %s", id)
		}
		if v != want {
			return fmt.Errorf("claim %s is %q, not %q", id, v, want)
		}
	}
	return nil
}

func (p *proseData) number(name string) (float64, error) {
	v, ok := p.macros[name]
	if !ok {
		return 0, fmt.Errorf("no generated macro \\%s", name)
	}
	x, err := strconv.ParseFloat(strings.NewReplacer("{,}", "", "$-$", "-", "+", "").Replace(v), 64)
	if err != nil {
		return 0, fmt.Errorf("\\%s = %q is not a number", name, v)
	}
	return x, nil
}

// directionAgrees checks that the generated \NetDirectionPhrase says
// "every" exactly when claims B1 and B2 (higher in every comparison, in
// time and in bytes) are reproduced.
func (p *proseData) directionAgrees() error {
	v, ok := p.macros["NetDirectionPhrase"]
	if !ok {
		return fmt.Errorf("no generated macro \\NetDirectionPhrase")
	}
	every := strings.HasPrefix(v, "slower and larger in every")
	both := p.verdict(reproduced, "B1", "B2") == nil
	if every != both {
		return fmt.Errorf("\\NetDirectionPhrase = %q, but claims B1 and B2 are %q and %q", v, p.verdicts["B1"], p.verdicts["B2"])
	}
	return nil
}

// all is the first error of the checks, or nil.
func all(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

const (
	reproduced    = "reproduced"
	notReproduced = "not reproduced"
)

// below reports whether macro a is below b (both numbers), or why not.
func (p *proseData) below(a, b string, factor float64) error {
	x, err1 := p.number(a)
	y, err2 := p.number(b)
	if err := all(err1, err2); err != nil {
		return err
	}
	if !(x < factor*y) {
		return fmt.Errorf("\\%s = %g is not below %g x \\%s = %g", a, x, factor, b, y)
	}
	return nil
}

// sign reports whether every macro named is positive (want > 0) or, with
// want < 0, whether any is negative.
func (p *proseData) sign(want int, names ...string) error {
	any := false
	for _, n := range names {
		x, err := p.number(n)
		if err != nil {
			return err
		}
		switch {
		case want > 0 && !(x > 0):
			return fmt.Errorf("\\%s = %g is not positive", n, x)
		case want < 0 && x < 0:
			any = true
		}
	}
	if want < 0 && !any {
		return fmt.Errorf("none of %v is negative", names)
	}
	return nil
}

var (
	studyASignificance = func(p *proseData) error {
		return all(p.verdict(reproduced, "A1a", "A2a", "A3a"), p.verdict(notReproduced, "A1c", "A2c", "A3c"))
	}
	gapModelFailed = func(p *proseData) error {
		x, err1 := p.number("TlsGapModelMaxErrMs")
		b, err2 := p.number("TlsGapModelBoundMs")
		err := all(err1, err2)
		if err == nil && !(x > b) {
			err = fmt.Errorf("the gap model's held-out error %.3f ms is within its bound %.3f ms: it passed", x, b)
		}
		return err
	}
	kemUnexplained = func(p *proseData) error {
		return all(p.below("TlsGapKemClosestMs", "TlsKemPublishedIncreaseMs", 0.5), p.below("TlsHostKemPredictedMs", "TlsKemPublishedIncreaseMs", 0.5))
	}
	lanRoundsDisagree = func(p *proseData) error {
		i2, err := p.number("NetScenarioISqLan")
		if err == nil && !(i2 >= 0.5) {
			err = fmt.Errorf("lan's rounds agree (I^2 = %.2f)", i2)
		}
		return err
	}
)

var proseClaims = []proseClaim{
	{"main.tex", "Study~A's directions and significance reproduce, its sizes do not", studyASignificance},
	{"main.tex", "a registered model of extra round trips failed its test", gapModelFailed},
	{"sections/tls.tex", "Every increase has the published sign and is significant over rounds; none has the published size.", studyASignificance},
	{"sections/tls.tex", "none brings ML-KEM-1024's increase near the published", kemUnexplained},
	{"sections/tls.tex", "Each of our increases is less than half of its published value.",
		func(p *proseData) error {
			return all(p.below("TlsSigIncreaseMs", "TlsSigPublishedIncreaseMs", 0.5), p.below("TlsKemIncreaseMs", "TlsKemPublishedIncreaseMs", 0.5),
				p.below("TlsHybridIncreaseMs", "TlsHybridPublishedIncreaseMs", 0.5))
		}},
	{"sections/intro.tex", "no factor we vary (stack, path, HelloRetryRequest) closes that gap", kemUnexplained},
	{"sections/tls.tex", "Nor is the missing part CPU", kemUnexplained},
	{"sections/net.tex", "the hybrid is \\NetDirectionPhrase{}:", func(p *proseData) error { return p.directionAgrees() }},
	{"sections/net.tex", "the rounds disagree by more than their own intervals", lanRoundsDisagree},
	{"sections/net.tex", "the fastest scenario's value is its outlying round, not its rounds' consensus", lanRoundsDisagree},
	{"sections/net.tex", "Interleaved, the hybrid finishes sooner on wan under BBR only:",
		func(p *proseData) error {
			return all(p.allSign(-1, "NetTtlbDiffMsWanFiveZeroKiBBbr", "NetTtlbDiffMsWanTwoZeroZeroKiBBbr", "NetTtlbDiffMsWanOneMiBBbr"),
				p.sign(1, "NetTtlbDiffMsWanOneZeroKiBCubic", "NetTtlbDiffMsWanFiveZeroKiBCubic", "NetTtlbDiffMsWanTwoZeroZeroKiBCubic", "NetTtlbDiffMsWanOneMiBCubic"))
		}},
	{"sections/net.tex", "while its handshake alone is slower under both (size~0)",
		func(p *proseData) error {
			return p.sign(1, "NetTtlbDiffMsLanZeroBbr", "NetTtlbDiffMsWanZeroBbr", "NetTtlbDiffMsFarZeroBbr",
				"NetTtlbDiffMsLanZeroCubic", "NetTtlbDiffMsWanZeroCubic", "NetTtlbDiffMsFarZeroCubic")
		}},
	{"sections/net.tex", "gains about as much on wan under BBR", paddedCarriesWanBBR},
	{"sections/net-appendix.tex", "On wan under BBR the padded arm carries", paddedCarriesWanBBR},
	{"sections/net.tex", "the response's first-round-trip window grows under both", windowGrowsUnderBoth},
	{"sections/net-appendix.tex", "$W$ does not tell the controls apart", windowGrowsUnderBoth},
	{"sections/net-appendix.tex", "under CUBIC, which gains nothing",
		func(p *proseData) error { return p.sign(1, "NetTtlbDiffMsWanFiveZeroKiBCubic") }},
	{"sections/net.tex", "where none of its \\NetTtlbMechOrderCellsFar{} cells has an interval below zero",
		func(p *proseData) error {
			n, err := p.number("NetTtlbMechOrderNegativeFar")
			if err == nil && n != 0 {
				err = fmt.Errorf("%v far cells have an interval below zero", n)
			}
			return err
		}},
	{"sections/net-appendix.tex", "against X25519 at far 50~KiB under BBR, the sign of wan's",
		func(p *proseData) error {
			return p.allSign(-1, "NetTtlbDiffMsFarFiveZeroKiBBbr", "NetTtlbDiffMsWanFiveZeroKiBBbr")
		}},
	{"sections/net-appendix.tex", "every cell's error is inside its bound",
		func(p *proseData) error {
			for _, cc := range []string{"Bbr", "Cubic"} {
				n, err := p.number("NetTtlbMechInterventionMisses" + cc)
				if err != nil {
					return err
				}
				if n != 0 {
					return fmt.Errorf("%v cells miss their bound under %s", n, cc)
				}
			}
			return nil
		}},
	{"sections/net.tex", "None of the four statements is reproduced.",
		func(p *proseData) error {
			for _, k := range []string{"One", "Two", "Three", "Four"} {
				if v := p.macros["NetTtlbVerdictK"+k]; v != notReproduced {
					return fmt.Errorf("K%s's verdict is %q", k, v)
				}
			}
			return nil
		}},
	{"sections/pico.tex", "that puts the exchange (C3) and the derived speed-up (C4) outside their tolerances",
		func(p *proseData) error { return p.verdict(notReproduced, "C3", "C4") }},
	{"sections/pico.tex", "The Cortex-M4 ratios spread wider than published (C17)",
		func(p *proseData) error { return p.verdict(notReproduced, "C17") }},
	{"sections/pico.tex", "so no SPHINCS+ set meets a deadline of 1~s",
		func(p *proseData) error {
			x, err := p.number("PicoSphincsShaTwoOneTwentyEightFSignMeanS")
			if err == nil && !(x > 1) {
				err = fmt.Errorf("the fastest SPHINCS+ set signs in %.2f s", x)
			}
			return err
		}},
	{"sections/discussion.tex", "Every post-quantum configuration is significantly slower than the baseline",
		func(p *proseData) error { return p.verdict(reproduced, "A1a", "A2a", "A3a") }},
	{"sections/discussion.tex", "the hybrid's increase is the largest, as published",
		func(p *proseData) error { return p.verdict(reproduced, "A5") }},
	{"sections/discussion.tex", "The hybrid's cost over ML-KEM-1024 follows this host's P-384 speed",
		func(p *proseData) error {
			// Observed over predicted within a factor of 1.5 either way.
			q, err := p.number("TlsHostHybridRatio")
			if err == nil && !(q > 1/1.5 && q < 1.5) {
				err = fmt.Errorf("the hybrid's observed cost is %.2f times the P-384 prediction", q)
			}
			return err
		}},
	{"sections/discussion.tex", "the stack depths are not assessable",
		func(p *proseData) error { return p.verdict("not assessable (calibrated)", "C14", "C15") }},
	{"sections/discussion.tex", "ours puts ML-KEM-1024 below (A6",
		func(p *proseData) error { return p.verdict(notReproduced, "A6") }},
	{"sections/discussion.tex", "the registered model of extra round trips failed its held-out test", gapModelFailed},
	{"sections/discussion.tex", "neither the five factors we switch nor this host's CPU account for the published", kemUnexplained},
	{"sections/discussion.tex", "The hybrid is \\NetDirectionPhrase{}, as published (B1)",
		func(p *proseData) error { return p.directionAgrees() }},
	{"sections/discussion.tex", "but its rounds disagree with each other", lanRoundsDisagree},
	{"sections/conclusion.tex", "significance, the hybrid is \\NetDirectionPhrase{}",
		func(p *proseData) error { return p.directionAgrees() }},
	{"sections/discussion.tex", "(\\NetFrameGrowthMin{}\\,\\% of frames) exceeds the published",
		func(p *proseData) error {
			lo, err1 := p.number("NetFrameGrowthMin")
			pub, err2 := p.number("NetPubVolumeGrowthMax")
			err := all(err1, err2)
			if err == nil && !(lo > pub) {
				err = fmt.Errorf("the smallest frame growth %.1f %% does not exceed the published %.0f %%", lo, pub)
			}
			return err
		}},
	{"sections/discussion.tex", "ML-KEM exchange and ML-DSA signing times agree with the original within the stated tolerances",
		func(p *proseData) error {
			return p.verdict(reproduced, "C1", "C2", "C8", "C9", "C10", "C11")
		}},
	{"sections/discussion.tex", "One ML-DSA-44 signature takes longer, and so in the constant-power model costs more energy, than one ECDSA P-256 signature (C13)",
		func(p *proseData) error { return p.verdict(notReproduced, "C13") }},
	{"sections/conclusion.tex", "The single-host TLS study reproduces in its significance tests and the hybrid's largest increase, not in the size of any increase",
		func(p *proseData) error {
			return all(p.verdict(reproduced, "A1a", "A2a", "A3a", "A5"), p.verdict(notReproduced, "A1c", "A2c", "A3c"))
		}},
}

// TestHandWrittenVerdicts: every statement of proseClaims is still in its
// file and true of the committed results.
func TestHandWrittenVerdicts(t *testing.T) {
	files := committedPaperSources(t)
	b, err := os.ReadFile(filepath.Join("..", "results", "claims.json"))
	if err != nil {
		t.Skipf("no results/claims.json next to the module: %v", err)
	}
	var res struct {
		Claims []struct {
			ID      string `json:"id"`
			Verdict string `json:"verdict"`
		} `json:"claims"`
	}
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	p := &proseData{verdicts: map[string]string{}, macros: map[string]string{}}
	for _, c := range res.Claims {
		p.verdicts[c.ID] = c.Verdict
	}
	def := regexp.MustCompile(`(?m)^\\newcommand\{\\([A-Za-z]+)\}\{(.*)\}\s*$`)
	for name, src := range files {
		if strings.HasPrefix(name, "generated/") {
			for _, m := range def.FindAllStringSubmatch(string(src), -1) {
				p.macros[m[1]] = m[2]
			}
		}
	}
	space := regexp.MustCompile(`\s+`)
	for _, c := range proseClaims {
		text := space.ReplaceAllString(string(files[c.file]), " ")
		if !strings.Contains(text, c.words) {
			t.Errorf("%s no longer says %q: update proseClaims with the new words and what makes them true", c.file, c.words)
			continue
		}
		if err := c.holds(p); err != nil {
			t.Errorf("%s says %q, which the results contradict: %v; rewrite the sentence or generate its words", c.file, c.words, err)
		}
	}
}

// paddedCarriesWanBBR: on wan under BBR, at 50 and 200 KiB, the padded
// arm's share of the hybrid's post-handshake gain has an interval that
// holds 1 (it gains about as much) and its hybrid gain is negative.
func paddedCarriesWanBBR(p *proseData) error {
	for _, size := range []string{"FiveZeroKiB", "TwoZeroZeroKiB"} {
		lo, err := p.number("NetTtlbMechShareLowerWan" + size + "Bbr")
		if err != nil {
			return err
		}
		hi, err := p.number("NetTtlbMechShareUpperWan" + size + "Bbr")
		if err != nil {
			return err
		}
		if lo > 1 || hi < 1 {
			return fmt.Errorf("wan %s BBR: the padded arm's share [%v, %v] excludes 1", size, lo, hi)
		}
	}
	return p.allSign(-1, "NetTtlbDiffMsWanFiveZeroKiBBbr", "NetTtlbDiffMsWanTwoZeroZeroKiBBbr")
}

// allSign is sign for every name on its own: each positive (want > 0) or
// each negative (want < 0).
func (p *proseData) allSign(want int, names ...string) error {
	for _, n := range names {
		if err := p.sign(want, n); err != nil {
			return err
		}
	}
	return nil
}

// windowGrowsUnderBoth: the hybrid's window at the response's start
// grows on wan at 50 and 200 KiB under both congestion controls.
func windowGrowsUnderBoth(p *proseData) error {
	return p.sign(1, "NetTtlbMechDWHybWanFiveZeroKiBBbr", "NetTtlbMechDWHybWanFiveZeroKiBCubic",
		"NetTtlbMechDWHybWanTwoZeroZeroKiBBbr", "NetTtlbMechDWHybWanTwoZeroZeroKiBCubic")
}
