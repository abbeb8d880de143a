package paperbuild

import (
	"context"
	"fmt"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// The built PDF is checked as a reader sees it, page by page, from the
// words pdftotext places on each page (-bbox-layout): a paper that
// pdflatex builds without an error can still print a table over the page
// numbers, leave a float alone on a page, or print LaTeX source.

// A Geometry is the page and its text block in PostScript points (1/72
// inch), as main.tex's geometry package sets them: A4 with 2.2 cm margins.
type Geometry struct {
	Width, Height, Margin float64
}

// PaperGeometry is main.tex's page: A4 (210 x 297 mm) with
// \usepackage[margin=2.2cm]{geometry}.
var PaperGeometry = Geometry{Width: 595.276, Height: 841.89, Margin: 2.2 / 2.54 * 72}

// MaxBodyPages is the most pages the body (abstract to conclusion, before
// the references) may take: a reader's account, with the detail in the
// appendices.
const MaxBodyPages = 16

// MinBodyPageFill is the least share of the text block's height a body
// page other than the last must span, top word to bottom word.
//
// A page below it holds a float alone (2-3 % ink in the build that
// motivated it) or a gap that a float left.
const MinBodyPageFill = 0.5

// marginSlack is how far, in points, a word may stand past the text block
// before it is in the margin. That allows a subscript or descender on the last
// line (pdftotext boxes a lowered "0" of c_0 2.9 pt below the block), not a
// line, which at 10 pt type reaches 10 pt or more into the margin.
const marginSlack = 5

// BodyEndMarker is the line main.tex writes to the log where the body
// ends, before the references: \typeout{pqrepro: the body ends on page
// \thepage}.
const BodyEndMarker = "pqrepro: the body ends on page "

// A pdfWord is one word pdftotext placed on a page.
type pdfWord struct {
	xMin, yMin, xMax, yMax float64
	text                   string
}

var (
	pageRe = regexp.MustCompile(`<page width="([\d.]+)" height="([\d.]+)">`)
	wordRe = regexp.MustCompile(`<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">([^<]*)</word>`)
	// sourceRes are LaTeX source or generator residue that must never
	// reach the printed text, each with what it is.
	sourceRes = []struct {
		re   *regexp.Regexp
		what string
	}{
		{regexp.MustCompile(`\$[^$\n]{0,40}\\[A-Za-z]+[^$\n]{0,40}\$`), "math source"},
		{regexp.MustCompile(`\\[A-Za-z@]{2,}`), "a macro name"},
		{regexp.MustCompile(`\\[%&#_${}]`), "an escaped character's source"},
		{regexp.MustCompile(`\bp_Holm\b`), "an identifier (p_Holm) for a symbol"},
		{regexp.MustCompile(`: measured\b|\(measured\)`), "a generator's status word in prose"},
	}
)

// parseBBox reads pdftotext -bbox-layout's XHTML into the words of each
// page, in page order.
func parseBBox(b []byte) ([][]pdfWord, error) {
	s := string(b)
	locs := pageRe.FindAllStringIndex(s, -1)
	if len(locs) == 0 {
		return nil, fmt.Errorf("pdftotext's layout has no page")
	}
	pages := make([][]pdfWord, len(locs))
	for i, loc := range locs {
		end := len(s)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		for _, m := range wordRe.FindAllStringSubmatch(s[loc[1]:end], -1) {
			var f [4]float64
			for k := range f {
				v, err := strconv.ParseFloat(m[k+1], 64)
				if err != nil {
					return nil, fmt.Errorf("page %d: a word's box %q: %w", i+1, m[0], err)
				}
				f[k] = v
			}
			pages[i] = append(pages[i], pdfWord{f[0], f[1], f[2], f[3], html.UnescapeString(m[5])})
		}
	}
	return pages, nil
}

// BodyPages reads the page the body ends on from the log's BodyEndMarker
// line.
func BodyPages(log []byte) (int, error) {
	i := strings.LastIndex(string(log), BodyEndMarker)
	if i < 0 {
		return 0, fmt.Errorf("the log has no %q line: main.tex must \\typeout it where the body ends, before the references", strings.TrimSpace(BodyEndMarker))
	}
	rest := string(log[i+len(BodyEndMarker):])
	n, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(rest, "\n", 2)[0]))
	if err != nil || n < 1 {
		return 0, fmt.Errorf("the log's body-end line %q does not end in a page number", strings.SplitN(string(log[i:]), "\n", 2)[0])
	}
	return n, nil
}

// checkPages returns one problem per defect a reader would see, naming the
// page and the text. The defects are more than MaxBodyPages body pages; a word
// in a margin other than the page number in the footer; a body page, other
// than the body's last, spanning less than MinBodyPageFill of the text block;
// LaTeX source or a status word in the printed text.
func checkPages(pages [][]pdfWord, bodyPages int, g Geometry) []string {
	var out []string
	if bodyPages > MaxBodyPages {
		out = append(out, fmt.Sprintf("the body (abstract to conclusion) takes %d pages, more than %d: move detail to the appendices", bodyPages, MaxBodyPages))
	}
	top, bottom := g.Margin, g.Height-g.Margin
	left, right := g.Margin, g.Width-g.Margin
	for i, words := range pages {
		page := i + 1
		var inBlock []pdfWord
		var margin []string
		footer := 0
		for _, w := range words {
			switch {
			case strings.TrimSpace(w.text) == "":
				// pdftotext boxes some invisible glyphs as empty words.
			case w.yMin > bottom+marginSlack && isPageNumber(w.text) && footer == 0:
				footer++ // the page number, centred in the footer
			case w.yMax > bottom+marginSlack || w.yMin < top-marginSlack || w.xMin < left-marginSlack || w.xMax > right+marginSlack:
				margin = append(margin, w.text)
			default:
				inBlock = append(inBlock, w)
			}
		}
		if len(margin) > 0 {
			out = append(out, fmt.Sprintf("page %d: text in the margin: %q: the float or line is too large for the page; let a long table break across pages (longtable) or move it to an appendix", page, excerpt(strings.Join(margin, " "))))
		}
		if page < bodyPages && len(inBlock) > 0 {
			lo, hi := inBlock[0].yMin, inBlock[0].yMax
			for _, w := range inBlock {
				lo, hi = min(lo, w.yMin), max(hi, w.yMax)
			}
			if fill := (hi - lo) / (bottom - top); fill < MinBodyPageFill {
				out = append(out, fmt.Sprintf("page %d: a body page spans %.0f %% of the text block (at least %.0f %%): a float alone on its page, beginning %q; place it with its text or move it to an appendix", page, 100*fill, 100*MinBodyPageFill, excerpt(text(inBlock))))
			}
		}
		t := text(words)
		for _, s := range sourceRes {
			for _, m := range s.re.FindAllStringIndex(t, 3) {
				out = append(out, fmt.Sprintf("page %d: %s printed: %q", page, s.what, excerpt(t[max(0, m[0]-30):min(len(t), m[1]+30)])))
			}
		}
	}
	return out
}

func text(ws []pdfWord) string {
	parts := make([]string, len(ws))
	for i, w := range ws {
		parts[i] = w.text
	}
	return strings.Join(parts, " ")
}

func isPageNumber(s string) bool {
	if _, err := strconv.Atoi(s); err == nil {
		return true
	}
	return strings.Trim(s, "ivxlc") == "" && s != ""
}

// excerpt is s cut to 80 characters.
func excerpt(s string) string {
	if r := []rune(s); len(r) > 80 {
		return string(r[:80]) + "..."
	}
	return s
}

// CheckPDF returns the defects a reader would see in the built paper
// (checkPages).
//
// It reads the pages with pdftotext and the body's length from the
// build's log.
func CheckPDF(ctx context.Context, pdf, log []byte) ([]string, error) {
	body, err := BodyPages(log)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "pqrepro-paper-check-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	in, out := filepath.Join(dir, "main.pdf"), filepath.Join(dir, "main.html")
	if err := os.WriteFile(in, pdf, 0o644); err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, "pdftotext", "-bbox-layout", in, out)
	if msg, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("pdftotext -bbox-layout (Debian's poppler-utils; `go run mage.go paper` installs it): %w: %s", err, excerpt(string(msg)))
	}
	b, err := os.ReadFile(out)
	if err != nil {
		return nil, err
	}
	pages, err := parseBBox(b)
	if err != nil {
		return nil, err
	}
	return checkPages(pages, body, PaperGeometry), nil
}
