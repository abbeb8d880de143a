package bundle

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"slices"
	"strings"

	"pqrepro/internal/provenance"
	"pqrepro/internal/repro"
)

// A Blob is one content-store file the bundle carries, with the runs
// whose meta.json refer to it.
type Blob struct {
	SHA256 string   `json:"sha256"`
	Size   int64    `json:"size,omitempty"` // 0 for an absent blob: unknown
	Path   string   `json:"path"`           // inside the bundle, relative to its top folder
	Refs   []string `json:"referenced_by"`
}

// A Run is one raw dataset as the artifact appendix describes it: what it
// is, how long it took and how much disk it holds. Everything comes from
// committed files (meta.json and the sizes of the run's files), so the
// appendix is reproducible.
type Run struct {
	Dir       string  `json:"dir"`
	Study     string  `json:"study"`
	RunID     string  `json:"run_id"`
	Profile   string  `json:"profile"`
	Start     string  `json:"start"`
	Seconds   float64 `json:"wall_seconds"`
	Host      string  `json:"host"`
	Board     string  `json:"board,omitempty"`
	Bytes     int64   `json:"committed_bytes"`
	BlobBytes int64   `json:"store_bytes"`
	Blobs     int     `json:"store_blobs"`
}

// isSHA256 reports whether s is a lower-case hex SHA-256, the form every
// hash in this project takes (repro.HashFile).
func isSHA256(s string) bool {
	return len(s) == 64 && strings.Trim(s, "0123456789abcdef") == ""
}

// blobRefs finds the content-store blobs one meta.json refers to.
//
// The convention (internal/provenance) is: meta.json `files` maps each
// file of the dataset to its SHA-256; a file that is committed in the run
// folder is data, any other is a large capture kept in the content store
// by that hash. A SHA-256 value in `measured` (at any depth) names a store
// blob too when its key says it is a capture or a stored file (the key
// contains "pcap", "capture" or "store", for example "capture_sha256"),
// unless it is the hash of a committed file of the run; other hashes in
// `measured` (a firmware image's uf2_sha256, say) describe build products
// that are not kept. A committed file whose hash differs from the
// one meta.json lists is an error: the bundle must not archive data that
// no longer matches its own provenance.
//
// sums maps every committed file (slash path) to its SHA-256. It returns
// the referenced hashes mapped to what referred to them ("data/x/y:
// capture.pcapng").
func blobRefs(metaPath string, m provenance.Meta, sums map[string]string) (map[string][]string, error) {
	dir := path.Dir(metaPath)
	inRun := map[string]bool{}
	for p, h := range sums {
		if strings.HasPrefix(p, dir+"/") {
			inRun[h] = true
		}
	}
	refs := map[string][]string{}
	var errs []error
	names := slices.Sorted(maps.Keys(m.Files))
	for _, name := range names {
		want := m.Files[name]
		p := path.Join(dir, name)
		if _, ok := sums[p+".gz"]; ok && isSHA256(want) {
			// Committed compressed (a small capture, experiments/instruments/rederive):
			// its SHA-256 names the uncompressed bytes, which the build's
			// records stage checks while it reads them.
			inRun[want] = true
			continue
		}
		if got, ok := sums[p]; ok {
			if got != want {
				errs = append(errs, fmt.Errorf("%s: files[%q] is %s but the committed %s hashes to %s: the dataset was changed after it was recorded; restore it with git checkout -- %s", metaPath, name, want, p, got, p))
			}
			continue
		}
		if !isSHA256(want) {
			errs = append(errs, fmt.Errorf("%s: files[%q] = %q is neither a committed file of the run nor a SHA-256 of a content-store blob", metaPath, name, want))
			continue
		}
		refs[want] = append(refs[want], dir+": "+name)
	}
	walkStrings("measured", m.Measured, func(key, v string) {
		k := strings.ToLower(key)
		stored := strings.Contains(k, "pcap") || strings.Contains(k, "capture") || strings.Contains(k, "store")
		if stored && isSHA256(v) && !inRun[v] {
			refs[v] = append(refs[v], dir+": "+key)
		}
	})
	return refs, errors.Join(errs...)
}

// walkStrings calls fn for every string value below v, with a dotted key.
func walkStrings(key string, v any, fn func(key, v string)) {
	switch x := v.(type) {
	case string:
		fn(key, x)
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(x)) {
			walkStrings(key+"."+k, x[k], fn)
		}
	case []any:
		for i, e := range x {
			walkStrings(fmt.Sprintf("%s[%d]", key, i), e, fn)
		}
	}
}

// collectRuns parses every committed meta.json under data/, checks every
// content-store blob they refer to (re-hashing it). It returns the blobs
// present (sorted by hash), those absent from the store (sorted by hash;
// Size 0: unknown) and the runs (sorted by folder). A blob that is present
// but corrupt is an error; all problems are reported together, each
// naming the run and what to do.
func collectRuns(ctx context.Context, files []*entry, sums map[string]string, store *repro.Store, logf func(string, ...any)) (blobs, absent []Blob, runs []Run, err error) {
	var errs []error
	refs := map[string][]string{}
	for _, f := range files {
		if !strings.HasPrefix(f.Path, "data/") || path.Base(f.Path) != provenance.FileName || f.Link != "" {
			continue
		}
		var m provenance.Meta
		if err := json.Unmarshal(f.Data, &m); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w: fix or restore it (git checkout -- %s)", f.Path, err, f.Path))
			continue
		}
		r, err := blobRefs(f.Path, m, sums)
		if err != nil {
			errs = append(errs, err)
		}
		dir := path.Dir(f.Path)
		run := Run{Dir: dir, Study: m.Study, RunID: m.RunID, Profile: m.Profile, Board: m.Board}
		if !m.Start.IsZero() {
			run.Start = m.Start.UTC().Format("2006-01-02T15:04:05Z")
			if m.End.After(m.Start) {
				run.Seconds = m.End.Sub(m.Start).Seconds()
			}
		}
		if m.Host.CPUModel != "" {
			run.Host = fmt.Sprintf("%s, %d cores", m.Host.CPUModel, m.Host.Cores)
		}
		for _, g := range files {
			if strings.HasPrefix(g.Path, dir+"/") {
				run.Bytes += g.Size
			}
		}
		for _, h := range slices.Sorted(maps.Keys(r)) {
			refs[h] = append(refs[h], r[h]...)
			run.Blobs++
		}
		runs = append(runs, run)
	}
	slices.SortFunc(runs, func(a, b Run) int { return strings.Compare(a.Dir, b.Dir) })

	for i, h := range slices.Sorted(maps.Keys(refs)) {
		if err := ctx.Err(); err != nil {
			return nil, nil, nil, err
		}
		logf("bundle: checking store blob %d/%d %s", i+1, len(refs), h[:12])
		who := slices.Compact(slices.Sorted(slices.Values(refs[h])))
		if _, err := os.Stat(store.Path(h)); errors.Is(err, os.ErrNotExist) {
			// Not here (a clone has no content store): the bundle still
			// builds and its appendix says what is missing and how to
			// fetch it; the records stages take those runs' records as
			// recorded.
			absent = append(absent, Blob{SHA256: h, Path: blobPath(h), Refs: who})
			continue
		}
		if err := store.Check(h); err != nil {
			errs = append(errs, fmt.Errorf("%s (referenced by %s): %w; to fix: rerun that study's experiment (`mage <study>:run`, a new run) and pin it, or copy the blob into %s from the machine that recorded the run or from an earlier bundle's .store/", h, strings.Join(who, ", "), err, store.Dir))
			continue
		}
		size, err := fileSize(store.Path(h))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		blobs = append(blobs, Blob{SHA256: h, Size: size, Path: blobPath(h), Refs: who})
	}
	if len(errs) > 0 {
		return nil, nil, nil, fmt.Errorf("content store: %w", errors.Join(errs...))
	}
	sizes := map[string]int64{}
	for _, b := range blobs {
		sizes[b.SHA256] = b.Size
	}
	for i := range runs {
		for _, h := range slices.Sorted(maps.Keys(refs)) {
			for _, who := range refs[h] {
				if strings.HasPrefix(who, runs[i].Dir+": ") {
					runs[i].BlobBytes += sizes[h]
					break
				}
			}
		}
	}
	return blobs, absent, runs, nil
}

// blobPath is where a blob lives inside the bundle. It is the default store
// location of the repository (repro.DefaultStoreDir), so that an unpacked
// bundle is a working tree whose captures are where the tools look.
func blobPath(h string) string {
	return path.Join(repro.DefaultStoreDir, "sha256", h[:2], h[2:])
}
