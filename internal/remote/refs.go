package remote

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"pqrepro/internal/provenance"
	"pqrepro/internal/repro"
)

// A Ref is one blob the datasets refer to, with who refers to it.
type Ref struct {
	Sum string
	By  []string // "data/<study>/<run>: <file>", sorted
	// Size is the blob's size as a run's MANIFEST.sha256 records it
	// ("# blob-size" lines, written at seal time), or -1 when no run
	// referring to it recorded one (runs sealed before sizes were).
	Size int64
}

// Referenced returns the blobs the runs under root/data refer to, sorted
// by hash. A blob reference is a file listed in a run's meta.json "files"
// (internal/provenance) that is not in the run folder: a large capture
// kept in the content store by its SHA-256. Runs are the folders
// data/<study>/<run>/ holding a meta.json; a hidden study or run folder
// (a name starting with '.', such as a run still being recorded, which
// lives in .incomplete-*) is not a run, as for the rest of the pipeline.
// A size the run's manifest records is the Ref's Size (the smallest, if
// two runs disagree: the tighter bound; mage status reports a manifest
// that was edited).
func Referenced(root string) ([]Ref, error) {
	metas, err := filepath.Glob(filepath.Join(root, "data", "*", "*", provenance.FileName))
	if err != nil {
		return nil, err
	}
	sort.Strings(metas)
	by := map[string][]string{}
	sizes := map[string]int64{}
	var errs []error
	for _, mp := range metas {
		dir := filepath.Dir(mp)
		if strings.HasPrefix(filepath.Base(dir), ".") || strings.HasPrefix(filepath.Base(filepath.Dir(dir)), ".") {
			continue
		}
		rel, _ := filepath.Rel(root, dir)
		rel = filepath.ToSlash(rel)
		for sum, n := range recordedSizes(dir) {
			if old, ok := sizes[sum]; !ok || n < old {
				sizes[sum] = n
			}
		}
		m, err := provenance.Read(dir)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for name, sum := range m.Files {
			_, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(name)))
			if err == nil {
				continue // committed with the run
			}
			if _, gzErr := os.Lstat(filepath.Join(dir, filepath.FromSlash(name)+".gz")); gzErr == nil {
				continue // committed gzip'd with the run (a small capture)
			}
			if !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
				continue
			}
			if !IsSHA256(sum) {
				errs = append(errs, fmt.Errorf("%s: files[%q] = %q is neither in the run folder nor a SHA-256 of a stored blob", mp, name, sum))
				continue
			}
			by[sum] = append(by[sum], rel+": "+name)
		}
	}
	refs := make([]Ref, 0, len(by))
	for s, who := range by {
		sort.Strings(who)
		size, ok := sizes[s]
		if !ok {
			size = -1
		}
		refs = append(refs, Ref{Sum: s, By: who, Size: size})
	}
	sort.Slice(refs, func(i, j int) bool { return refs[i].Sum < refs[j].Sum })
	return refs, errors.Join(errs...)
}

// recordedSizes reads the blob sizes the run folder's MANIFEST.sha256
// records. An unsealed run, or a manifest that does not parse (mage
// status and verify report it), records none: its blobs are pulled
// under the bound for unrecorded sizes.
func recordedSizes(dir string) map[string]int64 {
	b, err := os.ReadFile(filepath.Join(dir, repro.ManifestFile))
	if err != nil {
		return nil
	}
	m, err := repro.ParseManifest(repro.ManifestFile, b)
	if err != nil {
		return nil
	}
	return m.BlobSizes
}

// Sizes returns the recorded size of each ref that has one, by hash: the
// bound Options.Sizes gives a pull.
func Sizes(refs []Ref) map[string]int64 {
	out := map[string]int64{}
	for _, r := range refs {
		if r.Size >= 0 {
			out[r.Sum] = r.Size
		}
	}
	return out
}

// Sums returns the hashes of refs, in order.
func Sums(refs []Ref) []string {
	s := make([]string, len(refs))
	for i, r := range refs {
		s[i] = r.Sum
	}
	return s
}

// A State says where a referenced blob is.
type State string

const (
	Present    State = "present"     // in the local store
	Absent     State = "absent"      // neither local nor on the remote
	RemoteOnly State = "remote-only" // on the remote, not local: mage data:pull fetches it
	Unknown    State = "unknown"     // not local, and the remote could not be asked
)

// A BlobStatus is one referenced blob's State.
type BlobStatus struct {
	Ref
	State State
	Size  int64 // local size if present, remote size if remote-only, else -1
	Err   error // why the State is Unknown
}

// Survey says for each referenced blob whether it is present in the
// store, only on the remote, or absent. Blobs in the store are not
// re-hashed (mage verify does that) and not looked up on the remote; rem
// may be nil (no remote configured), making every missing blob Absent.
//
// A remote that fails DefaultAbandonAfter lookups in a row the same way
// (a hanging or refusing server), or once ctx has ended, is asked no
// more: the blobs left are Unknown with one shared error, which does not
// name a blob, so that mage status says it once.
func Survey(ctx context.Context, store *repro.Store, rem Remote, refs []Ref) []BlobStatus {
	out := make([]BlobStatus, len(refs))
	var lastKind string
	var inARow int
	var gaveUp error
	for i, r := range refs {
		st := BlobStatus{Ref: r, State: Absent, Size: -1}
		if fi, err := os.Stat(store.Path(r.Sum)); err == nil && fi.Mode().IsRegular() {
			st.State, st.Size = Present, fi.Size()
		} else if rem != nil {
			if gaveUp == nil && ctx.Err() != nil {
				gaveUp = fmt.Errorf("%s: not asked: %w", rem, context.Cause(ctx))
			}
			if gaveUp != nil {
				st.State, st.Err = Unknown, gaveUp
				out[i] = st
				continue
			}
			size, err := rem.Stat(ctx, r.Sum)
			switch {
			case err == nil:
				st.State, st.Size = RemoteOnly, size
			case !errors.Is(err, ErrNotFound):
				st.State, st.Err = Unknown, err
			}
			switch k := failureKind(err, r.Sum); {
			case k == "":
				lastKind, inARow = "", 0
			case k == lastKind:
				inARow++
			default:
				lastKind, inARow = k, 1
			}
			if inARow >= DefaultAbandonAfter {
				gaveUp = fmt.Errorf("%s: not asked after %d lookups in a row failed the same way (%s): %w", rem, inARow, lastKind, ErrAbandoned)
			}
		}
		out[i] = st
	}
	return out
}

// Summary counts the states, e.g. "19 blobs: 1 present, 18 remote-only".
func Summary(sts []BlobStatus) string {
	n := map[State]int{}
	for _, s := range sts {
		n[s.State]++
	}
	var parts []string
	for _, st := range []State{Present, RemoteOnly, Absent, Unknown} {
		if n[st] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[st], st))
		}
	}
	return fmt.Sprintf("%d blobs: %s", len(sts), strings.Join(parts, ", "))
}
