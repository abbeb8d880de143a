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
}

// Referenced returns the blobs the runs under root/data refer to, sorted
// by hash. A blob reference is a file listed in a run's meta.json "files"
// (internal/provenance) that is not in the run folder: a large capture
// kept in the content store by its SHA-256. Runs are the folders
// data/<study>/<run>/ holding a meta.json.
func Referenced(root string) ([]Ref, error) {
	metas, err := filepath.Glob(filepath.Join(root, "data", "*", "*", provenance.FileName))
	if err != nil {
		return nil, err
	}
	sort.Strings(metas)
	by := map[string][]string{}
	var errs []error
	for _, mp := range metas {
		dir := filepath.Dir(mp)
		m, err := provenance.Read(dir)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		rel, _ := filepath.Rel(root, dir)
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
			by[sum] = append(by[sum], filepath.ToSlash(rel)+": "+name)
		}
	}
	refs := make([]Ref, 0, len(by))
	for s, who := range by {
		sort.Strings(who)
		refs = append(refs, Ref{Sum: s, By: who})
	}
	sort.Slice(refs, func(i, j int) bool { return refs[i].Sum < refs[j].Sum })
	return refs, errors.Join(errs...)
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
func Survey(ctx context.Context, store *repro.Store, rem Remote, refs []Ref) []BlobStatus {
	out := make([]BlobStatus, len(refs))
	for i, r := range refs {
		st := BlobStatus{Ref: r, State: Absent, Size: -1}
		if fi, err := os.Stat(store.Path(r.Sum)); err == nil && fi.Mode().IsRegular() {
			st.State, st.Size = Present, fi.Size()
		} else if rem != nil {
			size, err := rem.Stat(ctx, r.Sum)
			switch {
			case err == nil:
				st.State, st.Size = RemoteOnly, size
			case !errors.Is(err, ErrNotFound):
				st.State, st.Err = Unknown, err
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
