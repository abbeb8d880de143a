package bundle

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"pqrepro/internal/repro"
)

// Names of the files the bundle generates at its top level.
const (
	ManifestFile = "BUNDLE.json"
	ArtifactFile = "ARTIFACT.md"
	BundleSums   = "BUNDLE.SHA256SUMS"
)

// Manifest is the content of BUNDLE.json. Which commit the bundle holds,
// whether the tree was clean, the date every entry carries, the store
// blobs and runs, and the tools that made it. It holds no wall-clock time,
// so two bundles of one commit are identical.
type Manifest struct {
	Name            string            `json:"name"`
	Version         string            `json:"version"`
	Commit          string            `json:"commit"`
	Dirty           bool              `json:"dirty"`
	DirtyFiles      []string          `json:"dirty_files,omitempty"`
	SourceDateEpoch int64             `json:"source_date_epoch"`
	Files           int               `json:"committed_files"`
	FilesBytes      int64             `json:"committed_bytes"`
	Blobs           []Blob            `json:"store_blobs"`
	BlobsBytes      int64             `json:"store_bytes"`
	AbsentBlobs     []Blob            `json:"absent_store_blobs"`
	Runs            []Run             `json:"runs"`
	Tools           map[string]string `json:"tools"`
	Format          string            `json:"format"`
	Generated       []string          `json:"generated"`
}

// FetchCommand fetches the content-store blobs a clone lacks from the
// project's data remote.
const FetchCommand = "go run mage.go data:pull"

// archiveFormat describes the archive for BUNDLE.json and ARTIFACT.md.
const archiveFormat = "tar (POSIX.1-1988 ustar; pax extended headers only for paths ustar cannot hold), entries sorted by path, " +
	"owner and group 0 with empty names, mode 0644 (0755 for directories and executables), mtime = SOURCE_DATE_EPOCH; " +
	"gzip (RFC 1952) level 6 with Go's compress/flate, no name and no time in its header"

// artifactInput is everything ARTIFACT.md is made from.
type artifactInput struct {
	M        *Manifest
	Targets  []Target
	Timings  *Timings
	TimeFile string
	Files    map[string]*entry // committed files by path
}

// quotedSections are the sections of the repository's documentation the
// appendix quotes under "Hardware and software needed". They say what
// a machine needs, and what was and was not tried on hardware.
var quotedSections = []struct{ doc, name, title string }{
	{"README.md", "the README", "Requirements"},
	{HardwareDoc, HardwareDoc, "Hardware notes"},
}

// HardwareDoc is the document whose "## Hardware notes" section the
// appendix quotes (boards, two hosts, what is untested on hardware).
const HardwareDoc = "docs/hardware.md"

// section returns the body of the markdown section "## title" of doc
// (up to the next level-2 heading), or "".
func section(doc, title string) string {
	var out []string
	in := false
	sc := bufio.NewScanner(strings.NewReader(doc))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(l, "## ") {
			if in {
				break
			}
			in = strings.TrimSpace(l[3:]) == title
			continue
		}
		if in {
			out = append(out, l)
		}
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}

// goVersion returns the go and toolchain lines of go.mod.
func goVersion(gomod []byte) string {
	var v []string
	for l := range strings.SplitSeq(string(gomod), "\n") {
		f := strings.Fields(l)
		if len(f) == 2 && (f[0] == "go" || f[0] == "toolchain") {
			v = append(v, f[0]+" "+f[1])
		}
	}
	if len(v) == 0 {
		return "unknown (no go line in go.mod)"
	}
	return strings.Join(v, ", ")
}

// duration formats seconds for a reader: "42.1 s", "12 min 05 s",
// "3 h 07 min".
func duration(s float64) string {
	d := time.Duration(s * float64(time.Second))
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%.1f s", s)
	case d < time.Hour:
		return fmt.Sprintf("%d min %02d s", int(d/time.Minute), int(d%time.Minute/time.Second))
	default:
		return fmt.Sprintf("%d h %02d min", int(d/time.Hour), int(d%time.Hour/time.Minute))
	}
}

// size formats a byte count in SI units with the exact count.
func size(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d B", n)
	case n < 1000*1000:
		return fmt.Sprintf("%.1f kB", float64(n)/1e3)
	case n < 1000*1000*1000:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	default:
		return fmt.Sprintf("%.2f GB", float64(n)/1e9)
	}
}

// stageDisk returns the bytes of the committed outputs of the stages in
// the lock file (all stages, or the named one).
func stageDisk(lock *repro.Lock, files map[string]*entry, only string) (int64, int) {
	var n int64
	count := 0
	for name, st := range lock.Stages {
		if only != "" && name != only {
			continue
		}
		for out := range st.Outputs {
			if e, ok := files[out]; ok {
				n += e.Size
				count++
			}
		}
	}
	return n, count
}

// cell escapes a markdown table cell.
func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// artifactMD writes the artifact appendix: hardware and software needed,
// time and disk per target, and which claims each target bears on. Every
// figure in it comes from committed files, so it is reproducible.
func artifactMD(in artifactInput) []byte {
	m := in.M
	var b bytes.Buffer
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	text := func(path string) string {
		if e, ok := in.Files[path]; ok && e.Data != nil {
			return string(e.Data)
		}
		return ""
	}

	p("# Artifact appendix: %s", m.Name)
	p("")
	state := "a clean checkout of that commit"
	if m.Dirty {
		state = fmt.Sprintf("**NOT a clean checkout**: %d tracked files differ from the commit and are archived as they were in the working tree (listed in %s)", len(m.DirtyFiles), ManifestFile)
	}
	p("This bundle holds commit `%s`, %s.", m.Commit, state)
	p("It was written by `mage bundle`; every figure below is read from committed files (meta.json of each run, the lock file, %s), not measured while bundling, so bundling the same commit again gives the same bytes.", in.TimeFile)
	p("")
	p("## Contents")
	p("")
	p("| what | where | size |")
	p("|---|---|---|")
	p("| the code, the raw data and the committed outputs (every file of the commit) | `./` | %d files, %s |", m.Files, size(m.FilesBytes))
	p("| large captures from the content store, referenced by SHA-256 from `data/*/*/meta.json` | `%s/sha256/` | %d blobs, %s |", repro.DefaultStoreDir, len(m.Blobs), size(m.BlobsBytes))
	p("| checksums of the committed data and outputs | `%s` | |", repro.SumsFile)
	p("| checksums of every file in this bundle | `%s` | |", BundleSums)
	p("| how to cite the software and the studies | `CITATION.cff` | |")
	p("| the licences: the code BSD-3-Clause, the data and the outputs derived from them CC BY 4.0 | `%s`, `%s` | |", LicenseFile, DataLicenseFile)
	p("| commit, tools, blobs and runs, machine-readable | `%s` | |", ManifestFile)
	p("")
	p("Check the bundle without Go: `sha256sum -c %s` (everything, captures included) and `sha256sum -c %s` (what the paper was built from). With Go: `go run mage.go verify`. The captures are where the pipeline looks for them (`%s/`), so the unpacked folder is a working tree.", BundleSums, repro.SumsFile, repro.DefaultStoreDir)
	p("")
	p("Archive format: %s.", archiveFormat)
	p("")
	if len(m.AbsentBlobs) > 0 {
		p("### Captures not in this bundle")
		p("")
		p("The machine that wrote this bundle did not have these %d content-store blobs, so the bundle goes without them. Everything still builds and verifies: each study's records stage takes a run's records as recorded when its captures are absent (and says so), and re-derives them from the packets when they are present. To add them, fetch them into `%s/` with `%s` and run `go run mage.go bundle` again.", len(m.AbsentBlobs), repro.DefaultStoreDir, FetchCommand)
		p("")
		p("| SHA-256 | referenced by |")
		p("|---|---|")
		for _, b := range m.AbsentBlobs {
			p("| `%s` | %s |", b.SHA256, cell(strings.Join(b.Refs, "; ")))
		}
		p("")
	}

	p("## Hardware and software needed")
	p("")
	p("- Go: %s (from go.mod).", goVersion(in.Files["go.mod"].content()))
	p("- A Linux host (x86-64 or arm64). Root only for the targets marked below.")
	p("")
	p("| target | root | hardware | Debian packages | npm (package-lock.json in) |")
	p("|---|---|---|---|---|")
	for _, t := range in.Targets {
		root := "no"
		if t.Root {
			root = "yes"
		}
		hw := t.Hardware
		if hw == "" {
			hw = "Linux host"
		}
		apt, npm := strings.Join(t.Apt, ", "), strings.Join(t.Npm, ", ")
		if apt == "" {
			apt = "none"
		}
		if npm == "" {
			npm = "none"
		}
		if t.Unknown != "" && len(t.Apt)+len(t.Npm) == 0 {
			apt, npm = "unknown: "+t.Unknown, "unknown"
		}
		p("| `%s` | %s | %s | %s | %s |", t.Name, root, cell(hw), cell(apt), cell(npm))
	}
	p("")
	p("Targets install missing Debian and npm packages themselves after saying what they will install (README, Requirements).")
	for _, q := range quotedSections {
		if body := section(text(q.doc), q.title); body != "" {
			p("")
			p("### From %s: %s", q.name, q.title)
			p("")
			p("%s", body)
		}
	}
	p("")

	p("## Time and disk per target")
	p("")
	p("### Experiments (measured by the committed runs)")
	p("")
	if len(m.Runs) == 0 {
		p("No run is committed in this bundle: no experiment has been measured yet.")
	} else {
		p("Wall time is `end - start` of the run's meta.json; disk is the run's committed files plus its content-store blobs.")
		p("")
		p("| target | run | profile | started (UTC) | wall time | host | committed | store |")
		p("|---|---|---|---|---|---|---|---|")
		for _, r := range m.Runs {
			wall := "not recorded"
			if r.Seconds > 0 {
				wall = duration(r.Seconds)
			}
			target := r.Study + ":run"
			if r.Study == "" {
				target = "unknown (meta.json has no study)"
			}
			host := r.Host
			if r.Board != "" && r.Board != "host" {
				host += "; board: " + r.Board
			}
			p("| `%s` | `%s` | %s | %s | %s | %s | %s | %s |", target, r.Dir, r.Profile, r.Start, wall, cell(host), size(r.Bytes), size(r.BlobBytes))
		}
	}
	p("")
	p("### Build, verify, paper (measured once, committed in `%s`)", in.TimeFile)
	p("")
	lock, lockErr := repro.ParseLock(repro.LockFile, in.Files[repro.LockFile].content())
	if in.Timings == nil {
		p("**Not measured**: `%s` is not committed. Measure with `PQREPRO_BUNDLE_MEASURE=1 go run mage.go bundle`, commit the file, and bundle again.", in.TimeFile)
	} else {
		p("Measured on %s with %s.", cell(in.Timings.Host), in.Timings.Go)
	}
	p("")
	p("| target | wall time | disk | note |")
	p("|---|---|---|---|")
	for _, name := range []string{"build", "verify", "paper"} {
		wall, note := "not measured", ""
		if in.Timings != nil {
			if t, ok := in.Timings.Targets[name]; ok {
				wall, note = duration(t.Seconds), t.Note
				if t.Failed {
					wall += " (failed)"
				}
			}
		}
		disk := "unknown (no lock file)"
		if lockErr == nil {
			switch name {
			case "build":
				n, c := stageDisk(lock, in.Files, "")
				disk = fmt.Sprintf("%s (%d committed outputs)", size(n), c)
			case "paper":
				n, _ := stageDisk(lock, in.Files, "paper")
				disk = size(n) + " (paper/main.pdf)"
			case "verify":
				n, _ := stageDisk(lock, in.Files, "")
				var raw int64
				for p, e := range in.Files {
					if strings.HasPrefix(p, "data/") {
						raw += e.Size
					}
				}
				disk = fmt.Sprintf("%s in a temporary tree (raw data and re-derived outputs), removed afterwards", size(n+raw))
			}
		}
		p("| `%s` | %s | %s | %s |", name, wall, cell(disk), cell(note))
	}
	p("")

	p("## Which claims each target supports")
	p("")
	p("> **A MAP, NO VERDICTS.** This table only says which published claims each target's output bears on, under the IDs of the paper's claims tables, `mage claims` and `mage all` (one catalogue, in each study's analysis package).")
	p("> Whether a claim is reproduced is computed by `mage claims` from the results, never written here; that engine's table (also in the paper) is authoritative.")
	p("")
	p("| target | study | claims its output bears on |")
	p("|---|---|---|")
	for _, t := range in.Targets {
		study := "all"
		if t.Study != "" {
			study = t.StudyTitle
			if study == "" {
				study = t.Study
			}
		}
		claims := strings.Join(t.Claims, "<br>")
		if claims == "" {
			claims = "none listed"
		}
		p("| `%s` | %s | %s |", t.Name, cell(study), cell(claims))
	}
	return b.Bytes()
}

// content returns a committed file's content if it was read, else nil.
func (e *entry) content() []byte {
	if e == nil {
		return nil
	}
	return e.Data
}

// manifestJSON encodes the manifest as indented JSON with sorted keys.
func manifestJSON(m *Manifest) []byte {
	if m.AbsentBlobs == nil {
		m.AbsentBlobs = []Blob{}
	}
	if m.Blobs == nil {
		m.Blobs = []Blob{}
	}
	if m.Runs == nil {
		m.Runs = []Run{}
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		panic(err) // a Manifest always encodes
	}
	return append(b, '\n')
}

// sumsFile lists every entry in sha256sum's text format, sorted by path.
func sumsFile(entries []*entry) []byte {
	es := slices.Clone(entries)
	slices.SortFunc(es, func(a, b *entry) int { return strings.Compare(a.Path, b.Path) })
	var b bytes.Buffer
	for _, e := range es {
		if e.Dir || e.Link != "" {
			continue
		}
		fmt.Fprintf(&b, "%s  %s\n", e.SHA256, e.Path)
	}
	return b.Bytes()
}
