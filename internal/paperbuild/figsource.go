package paperbuild

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"

	"pqrepro/internal/render"
	"pqrepro/internal/repro"
)

// FigSourceFile holds one macro per figure that names the code and the
// data (with SHA-256) it came from, for the figure captions.
const FigSourceFile = "paper/generated/figure-sources.tex"

// FigureSources makes the stage that writes, per PDF figure, a macro naming
// the code and raw data that made it, with hashes.
//
// The macro is \FigSource<Name> (figures/tls-ths.pdf -> \FigSourceTlsThs).
// It names a single file by its SHA-256, a run folder of several files by
// its tree hash (the SHA-256 of the `sha256sum` lines of its files, sorted
// by path, relative to the folder, leaving out meta.json and the folder's
// seal and notes (MANIFEST.sha256, README.md: no stage input, see
// repro.Stage.Inputs); `cd data/pico/<run> && sha256sum $(find . -type f !
// -name meta.json ! -name README.md ! -name MANIFEST.sha256 | LC_ALL=C sort
// | sed 's|^./||') | sha256sum` reproduces it). The stage declares the
// figures and the raw data files as inputs, so any change to either rewrites
// the captions.
func FigureSources(stages []*repro.Stage) *repro.Stage {
	producer := map[string]*repro.Stage{}
	for _, s := range stages {
		for _, o := range s.Outputs {
			producer[o] = s
		}
	}
	type origin struct {
		code []string
		data []string // input patterns under data/
	}
	var trace func(s *repro.Stage, seen map[string]bool, o *origin)
	trace = func(s *repro.Stage, seen map[string]bool, o *origin) {
		if seen[s.Name] {
			return
		}
		seen[s.Name] = true
		if s.Confirms != "" {
			o.data = append(o.data, s.Confirms) // a confirmed copy of raw data
			return
		}
		o.code = append(o.code, s.Code...)
		for _, in := range s.Inputs {
			if strings.HasPrefix(in, "data/") {
				o.data = append(o.data, in)
				continue
			}
			for out, t := range producer {
				if t != s && repro.Covers(in, out) {
					trace(t, seen, o)
				}
			}
		}
	}
	figures := map[string]*origin{}
	var inputs []string
	for out, s := range producer {
		if !strings.HasPrefix(out, "figures/") || !strings.HasSuffix(out, ".pdf") {
			continue
		}
		o := &origin{}
		trace(s, map[string]bool{}, o)
		slices.Sort(o.code)
		o.code = slices.Compact(o.code)
		slices.Sort(o.data)
		o.data = slices.Compact(o.data)
		figures[out] = o
		inputs = append(inputs, out)
		inputs = append(inputs, o.data...)
	}
	if len(figures) == 0 {
		return nil
	}
	slices.Sort(inputs)
	inputs = slices.Compact(inputs)
	// The captions name the producing packages: they are a parameter, so
	// that moving or renaming a package rewrites the captions (its code
	// hash alone would not, when the package's files are unchanged).
	params := map[string]string{}
	for fig, o := range figures {
		params["code "+fig] = strings.Join(o.code, " ")
	}
	return &repro.Stage{
		Name:    "paper:figure-sources",
		Doc:     "name the code and data hash of every figure for its caption",
		Code:    []string{"internal/paperbuild"},
		Params:  params,
		Inputs:  inputs,
		Outputs: []string{FigSourceFile},
		Run: func(ctx context.Context, env *repro.Env) error {
			hashes := map[string]string{}
			for _, f := range env.Inputs() {
				b, err := env.ReadFile(f)
				if err != nil {
					return err
				}
				hashes[f] = repro.HashBytes(b)
			}
			var n render.Numbers
			names := make([]string, 0, len(figures))
			for f := range figures {
				names = append(names, f)
			}
			slices.Sort(names)
			for _, fig := range names {
				o := figures[fig]
				// Group the data files by run folder: one file is named
				// with its hash; a folder of several with its tree hash,
				// the SHA-256 of its files' `sha256sum` lines (sorted).
				groups := map[string][]string{}
				var dirs []string
				for _, f := range env.Inputs() {
					if slices.ContainsFunc(o.data, func(p string) bool { return repro.Covers(p, f) }) && !strings.HasSuffix(f, "/meta.json") {
						dir := runDir(f)
						if _, ok := groups[dir]; !ok {
							dirs = append(dirs, dir)
						}
						groups[dir] = append(groups[dir], f)
					}
				}
				var data []string
				for _, dir := range dirs {
					files := groups[dir]
					if len(files) == 1 {
						data = append(data, fmt.Sprintf(`\texttt{%s} (SHA-256 \texttt{%s})`, texPath(files[0]), hashes[files[0]][:16]))
						continue
					}
					var lines strings.Builder
					for _, f := range files {
						fmt.Fprintf(&lines, "%s  %s\n", hashes[f], strings.TrimPrefix(f, dir+"/"))
					}
					data = append(data, fmt.Sprintf(`the %d files of \texttt{%s/} (tree SHA-256 \texttt{%s})`,
						len(files), texPath(dir), repro.HashBytes([]byte(lines.String()))[:16]))
				}
				code := make([]string, len(o.code))
				for i, c := range o.code {
					code[i] = `\texttt{` + texPath(c) + `}`
				}
				text := fmt.Sprintf("Made by %s from %s; figure SHA-256 \\texttt{%s}.",
					strings.Join(code, ", "), strings.Join(data, ", "), hashes[fig][:16])
				if err := n.Set("FigSource"+macroWords(strings.TrimSuffix(path.Base(fig), ".pdf")), text); err != nil {
					return err
				}
			}
			return env.WriteFile(FigSourceFile, []byte(n.Latex()))
		},
	}
}

// runDir is the run folder of a raw data file: data/<study>/<run-id>.
func runDir(f string) string {
	parts := strings.SplitN(f, "/", 4)
	if len(parts) < 4 {
		return path.Dir(f)
	}
	return strings.Join(parts[:3], "/")
}

// texPath makes a path safe in \texttt: underscores escaped, and break
// points after slashes.
func texPath(p string) string {
	return strings.ReplaceAll(render.Escape(p), "/", `/\allowbreak{}`)
}

// macroWords turns "tls-ths" or "pico-mldsa-sign" into "TlsThs",
// "PicoMldsaSign"; digits become words ("net-rtt2" -> "NetRttTwo").
func macroWords(s string) string {
	digits := []string{"Zero", "One", "Two", "Three", "Four", "Five", "Six", "Seven", "Eight", "Nine"}
	var b strings.Builder
	up := true
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9':
			b.WriteString(digits[r-'0'])
			up = true
		case r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z':
			if up {
				b.WriteString(strings.ToUpper(string(r)))
			} else {
				b.WriteRune(r)
			}
			up = false
		default:
			up = true
		}
	}
	return b.String()
}
