package runlife

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"pqrepro/internal/provenance"
)

// Bounds of the free text a person gives a run that the paper prints in a
// table cell. That text is the reason to pin a busy run (PinBusyEnv),
// shown in the p{4.5cm} column of the paper's table of runs
// (internal/paperbuild, machine.tex) at \small in Latin Modern (T1).
const (
	// MaxReasonLen bounds the whole text: about eight lines of that
	// column, a sentence or two, not a report.
	MaxReasonLen = 200
	// MaxWordLen bounds a word, a run of characters between spaces or
	// hyphens (LaTeX breaks a line at either, and nowhere else in such
	// text). 13 of the widest printable ASCII character, W, measure 123.6
	// pt at \small in Latin Modern T1, inside the column's 128.0 pt
	// (4.5 cm); 16 W measured with pdflatex overflow it by 24 pt, which
	// the paper stage refuses (internal/latex.Problems).
	MaxWordLen = 13
)

// CheckReason checks free text that reaches the paper, named by what (an
// environment variable, a field). The text must be printable ASCII only
// (U+0020 to U+007E: no tab, newline, other control character, line or
// paragraph separator, accented letter or emoji, which the paper's
// pdflatex refuses or cannot set in its fonts; render.Escape makes LaTeX's
// special characters safe), at most MaxReasonLen characters, no word
// longer than MaxWordLen, and not blank. A run is sealed with the text,
// so it is checked before anything is recorded.
func CheckReason(what, s string) error {
	if strings.TrimSpace(s) == "" {
		return fmt.Errorf("%s is blank: give the reason in words, or leave it unset", what)
	}
	if err := checkPrintable(what, s); err != nil {
		return err
	}
	if len(s) > MaxReasonLen {
		return fmt.Errorf("%s is %d characters long: at most %d (the paper prints it in a narrow table column); say why in a sentence", what, len(s), MaxReasonLen)
	}
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == '-' }) {
		if len(w) > MaxWordLen {
			return fmt.Errorf("%s: the word %q is %d characters long: at most %d, or it runs out of the paper's table column; split it with a space or a hyphen", what, w, len(w), MaxWordLen)
		}
	}
	return nil
}

// checkPrintable refuses any character of s outside printable ASCII
// (U+0020 to U+007E), naming its position (in bytes, from 1) and code.
func checkPrintable(what, s string) error {
	for i, r := range s {
		if r < 0x20 || r > 0x7e {
			name := fmt.Sprintf("%U", r)
			if r == utf8.RuneError {
				name = "a byte that is not UTF-8"
			}
			return fmt.Errorf("%s: character %d is %s (%q): the paper prints this text, so it may hold printable ASCII only (letters, digits, spaces and punctuation; no tabs, line breaks, accents or emoji)", what, i+1, name, r)
		}
	}
	return nil
}

// checkMeta checks the free text of a run's meta.json that the paper
// prints and no person typed, by checkPrintable. They are the host's CPU
// model (Study C's table notes) and the board (Study C's tables). They come
// from the machine (/proc/cpuinfo, the board's or emulator's ID), so a
// run is refused here, before it is sealed, rather than sealed with text
// that stops pdflatex.
func checkMeta(m provenance.Meta) error {
	if err := checkPrintable("meta.json host.cpu_model", m.Host.CPUModel); err != nil {
		return err
	}
	return checkPrintable("meta.json board", m.Board)
}
