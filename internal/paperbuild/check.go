package paperbuild

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// A paper's sources are checked before pdflatex runs, so that a build
// fails on what the log does not show: a float that no text refers to,
// and a measured number typed into the text by hand instead of coming
// from a generated macro (which would not change when the data do).

var (
	labelRe = regexp.MustCompile(`\\label\{((?:fig|tab):[^}]*)\}`)
	refRe   = regexp.MustCompile(`\\(?:ref|autoref|cref|pageref)\{([^}]*)\}`)
	// What a measurement looks like in running text: a decimal number, or
	// a number followed by a unit or a percent sign.
	numberRe = regexp.MustCompile(`\d[\d.,{}]*\s*(?:~|\\,)?\s*(?:\\%|ms\b|kB\b|KB\b|MB\b|mJ\b|mW\b|bytes\b)|\d+\.\d+`)
	// Arguments that name things rather than say them.
	skipArgRe = regexp.MustCompile(`\\(?:cite|citep|citet|ref|label|input|include|includegraphics|bibliography|bibliographystyle|usepackage|documentclass|texttt|url|studyslot|optinput|IfFileExists)(?:\[[^\]]*\])?\{[^}]*\}`)
)

// conventions lists the numbers any paper's text may state literally,
// each a fact of the toolchain or a convention, not a measurement. They
// are the module's Go release and the conventional thresholds of the statistics
// (their definitions). The numbers a study's text may type (its
// versions, its hardware) are the study's: its registration passes them
// to Stage (pipeline.Study.HandTyped), so that this package names no
// study.
var conventions = []string{
	"1.27",                   // Go 1.27, the module's toolchain (go.mod)
	"1.10",                   // SciPy 1.10 conventions
	"0.147", "0.33", "0.474", // Cliff's delta magnitude thresholds (Romano et al.)
}

// CheckSources returns every problem of the paper's sources. That is, a
// figure or table label that no \ref names (in a generated file only
// when a hand-written source names the file: one no source names is not
// in the paper yet), a number in the
// hand-written text (main.tex and sections/, not generated/) that looks
// measured and is neither a convention nor one of handTyped, the numbers
// the studies allow, and a sign word that its generated numbers
// contradict (checkSignWords). files maps paths relative to paper/ to their
// content.
func CheckSources(files map[string][]byte, handTyped []string) []string {
	allowed := slices.Concat(conventions, handTyped)
	macros := generatedMacros(files)
	var problems []string
	labels := map[string]string{}
	refs := map[string]bool{}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	slices.Sort(names)
	used := usedGenerated(files)
	for _, name := range names {
		if !strings.HasSuffix(name, ".tex") {
			continue
		}
		text := stripComments(string(files[name]))
		for _, m := range labelRe.FindAllStringSubmatch(text, -1) {
			if strings.HasPrefix(name, "generated/") && !used[name] {
				break // not in the paper: its floats are not either
			}
			labels[m[1]] = name
		}
		for _, m := range refRe.FindAllStringSubmatch(text, -1) {
			for _, r := range strings.Split(m[1], ",") {
				refs[strings.TrimSpace(r)] = true
			}
		}
		if strings.HasPrefix(name, "generated/") {
			continue
		}
		problems = append(problems, checkSignWords(name, text, macros)...)
		for i, line := range strings.Split(text, "\n") {
			line = skipArgRe.ReplaceAllString(line, "")
			for _, num := range numberRe.FindAllString(line, -1) {
				if slices.Contains(allowed, strings.TrimSpace(num)) {
					continue
				}
				problems = append(problems, fmt.Sprintf("%s:%d: %q typed by hand: use a generated macro (or, if it is a fact of a study's setup and not a measurement, add it to that study's HandTyped in its analysis package, with the reason)", name, i+1, num))
			}
		}
	}
	var unref []string
	for l := range labels {
		if !refs[l] {
			unref = append(unref, fmt.Sprintf("%s: float %s is never referenced in the text", labels[l], l))
		}
	}
	slices.Sort(unref)
	return append(problems, unref...)
}

// stripComments removes LaTeX comments (an unescaped % to the end of the
// line).
func stripComments(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		for j := 0; j < len(l); j++ {
			if l[j] == '\\' {
				j++
				continue
			}
			if l[j] == '%' {
				lines[i] = l[:j]
				break
			}
		}
	}
	return strings.Join(lines, "\n")
}

// generatedRe is a generated file's name in a hand-written source (an
// \input, \optinput or \IfFileExists argument).
var generatedRe = regexp.MustCompile(`generated/([A-Za-z0-9_.-]+)`)

// usedGenerated is the set of generated files (paths relative to paper/)
// that a hand-written source names. It adds ".tex" where the source
// leaves it out, as \input does.
func usedGenerated(files map[string][]byte) map[string]bool {
	used := map[string]bool{}
	for name, b := range files {
		if strings.HasPrefix(name, "generated/") || !strings.HasSuffix(name, ".tex") {
			continue
		}
		for _, m := range generatedRe.FindAllStringSubmatch(stripComments(string(b)), -1) {
			used["generated/"+m[1]] = true
			if !strings.HasSuffix(m[1], ".tex") {
				used["generated/"+m[1]+".tex"] = true
			}
		}
	}
	return used
}
