package repro

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"time"

	"golang.org/x/sys/unix"
)

// A Run is a raw dataset being recorded. Experiments write into Dir, a
// hidden temporary folder beside the final one; Commit publishes it under
// data/<study>/<run-id>/ in one rename, and only then is it a run. A run
// that fails or is interrupted is removed by Abort and never seen by the
// analysis, and an existing run is never overwritten.
type Run struct {
	// ID is the run's name: UTC start time, profile and a short label,
	// for example 20261130T120000Z-quick.
	ID string
	// Dir is where the experiment writes while the run is in progress.
	Dir string
	// Final is where the run will live after Commit.
	Final string
	// Manifest is the SHA-256 of the run's MANIFEST.sha256, set by
	// Commit: the value the spec's pin records (spec.Sealed).
	Manifest string
	// Store is where the blobs meta.json names are, so that Commit
	// records their sizes in the manifest; nil: StoreFor(Final).
	Store *Store
	done  bool
}

var runIDPart = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)

// NewRun starts a run of study in the data directory dataDir, named after
// the start time (in UTC, to the second) and the profile.
func NewRun(dataDir, study, profile string, start time.Time) (*Run, error) {
	if !runIDPart.MatchString(study) || !runIDPart.MatchString(profile) {
		return nil, fmt.Errorf("new run: study %q and profile %q must be lower-case letters, digits and dashes", study, profile)
	}
	id := start.UTC().Format("20060102T150405Z") + "-" + profile
	parent := filepath.Join(dataDir, study)
	final := filepath.Join(parent, id)
	if _, err := os.Stat(final); err == nil {
		return nil, fmt.Errorf("new run: %s already exists; runs are never overwritten (wait a second and start again)", final)
	}
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, fmt.Errorf("new run: %w", err)
	}
	dir, err := os.MkdirTemp(parent, ".incomplete-"+id+"-")
	if err != nil {
		return nil, fmt.Errorf("new run: %w", err)
	}
	return &Run{ID: id, Dir: dir, Final: final}, nil
}

// Commit seals the run with its MANIFEST.sha256, then publishes it.
//
// The manifest lists every file of the folder and every content-store
// blob its meta.json names, by SHA-256 (see ManifestFile). It fails,
// leaving the temporary folder for inspection, if the folder cannot be
// sealed (meta.json disagrees with a file) or a run of the same name
// appeared meanwhile.
func (r *Run) Commit() error {
	if r.done {
		return errors.New("run already committed or aborted")
	}
	store := r.Store
	if store == nil {
		store = StoreFor(r.Final)
	}
	sum, err := WriteManifestStore(r.Dir, filepath.Base(filepath.Dir(r.Final))+"/"+r.ID, store)
	if err != nil {
		return fmt.Errorf("commit run %s: %w", r.ID, err)
	}
	r.Manifest = sum
	if err := syncTree(r.Dir); err != nil {
		return fmt.Errorf("commit run %s: %w", r.ID, err)
	}
	if err := unix.Renameat2(unix.AT_FDCWD, r.Dir, unix.AT_FDCWD, r.Final, unix.RENAME_NOREPLACE); err != nil {
		return fmt.Errorf("commit run %s to %s: %w (an earlier run with this name is kept)", r.ID, r.Final, err)
	}
	r.done = true
	return nil
}

// Abort removes an uncommitted run. It is safe to call after Commit.
func (r *Run) Abort() {
	if r.done {
		return
	}
	r.done = true
	os.RemoveAll(r.Dir)
}

func syncTree(dir string) error {
	return filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		return f.Sync()
	})
}
