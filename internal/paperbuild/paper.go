// Package paperbuild makes the stages that turn the generated outputs into
// the paper. That is, the PDF itself (pdflatex over paper/main.tex and
// exactly the generated files) and the figure-source captions. It is its
// own package so that the paper's code version covers only what builds the
// paper.
package paperbuild

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"pqrepro/internal/latex"
	"pqrepro/internal/provenance"
	"pqrepro/internal/repro"
)

// BibFile is the paper's bibliography database, relative to paper/.
const BibFile = "references.bib"

// Stage builds paper/main.pdf from paper/main.tex and exactly the
// generated files the other stages write for it. That is, tables and
// numbers under paper/generated/ and PDF figures under figures/.
// Declaring them one by one (not the folders) makes the paper depend on
// every stage that feeds it and on nothing else. handTyped are the
// numbers the studies allow the text to state literally (CheckSources);
// they are a parameter, so that changing them checks the sources again.
// date is the PDF's date (the setting SOURCE_DATE_EPOCH).
func Stage(root string, others []*repro.Stage, handTyped []string, date time.Time) *repro.Stage {
	if _, err := os.Stat(filepath.Join(root, "paper", "main.tex")); err != nil {
		return nil
	}
	inputs := []string{"paper/main.tex"}
	for _, extra := range []string{"sections", BibFile} {
		if _, err := os.Stat(filepath.Join(root, "paper", extra)); err == nil {
			inputs = append(inputs, "paper/"+extra)
		}
	}
	for _, s := range others {
		for _, o := range s.Outputs {
			if strings.HasPrefix(o, "paper/generated/") || (strings.HasPrefix(o, "figures/") && strings.HasSuffix(o, ".pdf")) {
				inputs = append(inputs, o)
			}
		}
	}
	slices.Sort(inputs[1:])
	handTyped = slices.Clone(handTyped)
	slices.Sort(handTyped)
	handTyped = slices.Compact(handTyped)
	return &repro.Stage{
		Name:    "paper",
		Doc:     "build paper/main.pdf with pdflatex",
		Code:    []string{"internal/paperbuild"},
		Inputs:  inputs,
		Params:  map[string]string{repro.EpochParam: repro.FormatEpoch(date), "hand_typed": strings.Join(handTyped, " ")},
		Outputs: []string{"paper/main.pdf"},
		Tools: func(ctx context.Context) map[string]string {
			if v, err := provenance.ToolVersion(ctx, "pdflatex", "--version"); err == nil {
				return map[string]string{"pdflatex": v}
			}
			return nil
		},
		Run: func(ctx context.Context, env *repro.Env) error {
			files := map[string][]byte{}
			for _, in := range env.Inputs() {
				b, err := env.ReadFile(in)
				if err != nil {
					return err
				}
				// paper/x -> x, figures/x -> figures/x
				files[strings.TrimPrefix(in, "paper/")] = b
			}
			pdf, err := Build(ctx, files, handTyped, date)
			if err != nil {
				return err
			}
			return env.WriteFile("paper/main.pdf", pdf)
		},
	}
}

// Build is the paper stage's work on the paper's files, which it checks
// before and after pdflatex.
//
// The files' paths are relative to paper/, figures under figures/. It
// checks the sources (CheckSources), runs pdflatex, and checks the log
// (latex.Problems) and the pages a reader sees (CheckPDF). Any problem
// fails it, naming the page or the line; no PDF with a defect is
// returned.
func Build(ctx context.Context, files map[string][]byte, handTyped []string, date time.Time) ([]byte, error) {
	if p := CheckSources(files, handTyped); len(p) > 0 {
		return nil, fmt.Errorf("the paper's sources are not finished (fix them, then build again):\n  %s", strings.Join(p, "\n  "))
	}
	var log []byte
	pdf, err := latex.Build(ctx, latex.Options{Main: "main.tex", Files: files, Date: date, Log: &log})
	if err != nil {
		return nil, err
	}
	p := latex.Problems(log)
	if len(p) == 0 {
		q, err := CheckPDF(ctx, pdf, log)
		if err != nil {
			return nil, fmt.Errorf("check the built paper: %w", err)
		}
		p = q
	}
	if len(p) > 0 {
		return nil, fmt.Errorf("the paper built but is not finished (fix the sources, then build again):\n  %s", strings.Join(p, "\n  "))
	}
	return pdf, nil
}
