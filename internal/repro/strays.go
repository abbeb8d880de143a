package repro

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// runIDPattern is a run's folder name as NewRun makes it: the UTC start
// time to the second and the profile, 20261130T120000Z-quick.
var runIDPattern = regexp.MustCompile(`^[0-9]{8}T[0-9]{6}Z-[a-z0-9][a-z0-9-]*$`)

// IsRunID reports whether name is a run ID as NewRun makes it.
func IsRunID(name string) bool { return runIDPattern.MatchString(name) }

// StrayEntries lists what sits under <raw dir>/<study>/ without being a
// sealed run. A folder whose name is not a run ID, a folder without its
// MANIFEST.sha256, or a file. Each is a Problem naming the path (relative
// to root) and what to do. The temporary folders of runs in progress or
// killed (.incomplete-*) are not listed here: they are leftovers, which
// status reports and clean removes. Nothing of a stray entry is listed in
// SHA256SUMS, nor read by any stage.
func StrayEntries(root string, rawDirs []string) ([]Problem, error) {
	var out []Problem
	err := walkRaw(root, rawDirs, func(d, rel string) {
		// A file, or a hidden folder, beside the study folders: no stage
		// reads it and SHA256SUMS leaves hidden paths out, so without
		// this line nothing would name it.
		out = append(out, Problem{Path: rel, What: fmt.Sprintf("not a study folder: %s/ holds one folder per study (%s/<study>/<run-id>/), none hidden; nothing of it is listed in %s or read by a stage: remove it", d, d, SumsFile)})
	}, func(study, rel string, e os.DirEntry) {
		if what := strayReason(root, rel, e); what != "" {
			out = append(out, Problem{Path: rel, What: what + fmt.Sprintf("; nothing of it is listed in %s or read by a stage: remove it, or record a run (`mage %s:run`)", SumsFile, study)})
		}
	})
	slices.SortFunc(out, func(a, b Problem) int { return strings.Compare(a.Path, b.Path) })
	return out, err
}

// RunFolders lists the sealed runs under <raw dir>/<study>/: every
// folder StrayEntries does not name, as slash paths relative to root,
// sorted. Each is checked against its own manifest, pinned or not.
func RunFolders(root string, rawDirs []string) ([]string, error) {
	var out []string
	err := walkRaw(root, rawDirs, func(string, string) {}, func(_, rel string, e os.DirEntry) {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") && strayReason(root, rel, e) == "" {
			out = append(out, rel)
		}
	})
	slices.Sort(out)
	return out, err
}

// walkRaw calls notStudy for each entry of a raw dir that is not a study
// folder (a file or a hidden folder) and entry for each entry of a study
// folder (<raw dir>/<study>/<name>), with slash paths relative to root.
// A raw dir that does not exist holds nothing.
func walkRaw(root string, rawDirs []string, notStudy func(d, rel string), entry func(study, rel string, e os.DirEntry)) error {
	for _, d := range rawDirs {
		d = path.Clean(d)
		studies, err := os.ReadDir(filepath.Join(root, filepath.FromSlash(d)))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return err
		}
		for _, st := range studies {
			if rel := d + "/" + st.Name(); !st.IsDir() || strings.HasPrefix(st.Name(), ".") {
				notStudy(d, rel)
				continue
			}
			entries, err := os.ReadDir(filepath.Join(root, filepath.FromSlash(d), st.Name()))
			if err != nil {
				return err
			}
			for _, e := range entries {
				entry(st.Name(), d+"/"+st.Name()+"/"+e.Name(), e)
			}
		}
	}
	return nil
}

// strayReason says why rel is not a sealed run, or "" if it is one (or a
// run's temporary folder).
func strayReason(root, rel string, e os.DirEntry) string {
	name := e.Name()
	switch {
	case strings.HasPrefix(name, ".incomplete-"):
		return ""
	case !e.IsDir():
		return "not a run: a run is a folder <start time>-<profile> (like 20261130T120000Z-quick)"
	case !IsRunID(name):
		return "not a run: the folder's name is not a run ID <start time>-<profile> (like 20261130T120000Z-quick)"
	}
	fi, err := os.Lstat(filepath.Join(root, filepath.FromSlash(rel), ManifestFile))
	if err != nil || !fi.Mode().IsRegular() {
		return "not a sealed run: it has no " + ManifestFile + " (a run committed before manifests existed is sealed once with `go run ./cmd/pqrepro seal " + rel + "`)"
	}
	return ""
}

// strayFolders is the set of StrayEntries' paths, if e.SealedRuns.
func (e *Engine) strayFolders() (map[string]bool, error) {
	if !e.SealedRuns {
		return nil, nil
	}
	ps, err := StrayEntries(e.Root, e.RawDirs)
	if err != nil {
		return nil, err
	}
	m := map[string]bool{}
	for _, p := range ps {
		m[p.Path] = true
	}
	return m, nil
}
