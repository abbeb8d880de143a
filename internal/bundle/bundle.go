package bundle

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"time"

	"pqrepro/internal/atomicfile"
	"pqrepro/internal/provenance"
	"pqrepro/internal/repro"
)

// DefaultOutDir is where bundles are written, relative to the root. It is
// inside .cache/, which Git ignores, so a bundle never dirties the tree
// it describes.
const DefaultOutDir = ".cache/dist"

// CitationFile is the citation metadata every bundle must carry
// (Citation File Format 1.2.0).
const CitationFile = "CITATION.cff"

// LicenseFile (the code's licence) and DataLicenseFile (the data's and the
// derived outputs') must be in every bundle too. An archive cut from the
// repository is redistributed, and says on what terms.
const (
	LicenseFile     = "LICENSE"
	DataLicenseFile = "LICENSE-DATA"
)

// Options say what to bundle and where.
type Options struct {
	// Root is the repository root, the top level of a Git checkout.
	Root string
	// OutDir receives pqrepro-<version>.tar.gz; empty is
	// <Root>/DefaultOutDir.
	OutDir string
	// Version names the bundle; empty is `git describe --tags --always
	// --abbrev=12`, with "-dirty" appended for a dirty tree. Letters,
	// digits, '.', '_', '+' and '-' only.
	Version string
	// Epoch is the time every entry carries (the setting
	// SOURCE_DATE_EPOCH); zero is the default (repro.EpochOr).
	Epoch time.Time
	// Store holds the captures (the setting PQREPRO_STORE); nil is
	// repro.OpenStore(Root, "").
	Store *repro.Store
	// AllowDirty bundles a tree whose tracked files differ from the
	// commit: their working-tree content is archived and the bundle is
	// marked dirty in its name, BUNDLE.json and ARTIFACT.md. Without it a
	// dirty tree is refused, because a bundle must be one commit.
	AllowDirty bool
	// Targets describe the targets for the artifact appendix; nil is
	// CommonTargets() (no study's run target: the caller adds those).
	Targets []Target
	// TimingsFile is the committed file with the measured times of
	// build, verify and paper, relative to Root; empty is
	// DefaultTimingsFile.
	TimingsFile string
	// Tools are extra tool versions to record in BUNDLE.json; the Go and
	// Git versions are always recorded.
	Tools map[string]string
	// Log receives progress lines; nil discards them.
	Log io.Writer
}

// Report says what Write made.
type Report struct {
	Path     string // the archive
	SHA256   string // of the archive
	Size     int64  // of the archive, bytes
	Commit   string
	Dirty    bool
	Files    int // committed files archived
	Blobs    int // store blobs archived
	Absent   int // store blobs referenced but not in the store, so not archived
	Warnings []string
}

var versionRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._+-]*$`)

// Write makes the bundle, a gzip-compressed tar.
//
// It is identical byte for byte whenever the commit, the store blobs it
// refers to, SOURCE_DATE_EPOCH and the Go version are the same. It holds,
// under the top folder pqrepro-<version>/:
//
//   - every file Git tracks (git ls-files), with the content of the
//     working tree, which must equal the commit unless AllowDirty;
//   - every content-store blob a committed data/**/meta.json refers to
//     (see blobRefs), re-hashed first, at .store/sha256/xx/rest;
//   - BUNDLE.json (Manifest), ARTIFACT.md (the artifact appendix) and
//     BUNDLE.SHA256SUMS (every file of the bundle).
//
// Nothing is written unless every check passes: the archive is written to
// a temporary file and renamed into place at the end, so an error or a
// cancellation leaves no partial archive behind.
func Write(ctx context.Context, opt Options) (*Report, error) {
	logf := func(format string, args ...any) {
		if opt.Log != nil {
			fmt.Fprintf(opt.Log, format+"\n", args...)
		}
	}
	root, err := filepath.Abs(opt.Root)
	if err != nil {
		return nil, err
	}
	epoch := repro.EpochOr(opt.Epoch).UTC().Truncate(time.Second)
	if epoch.Unix() < 0 || epoch.Unix() > 1<<33-1 {
		return nil, fmt.Errorf("SOURCE_DATE_EPOCH %d does not fit a tar header (0 to 2^33-1 seconds)", epoch.Unix())
	}
	store := opt.Store
	if store == nil {
		store = repro.OpenStore(root, "")
	}
	timingsFile := opt.TimingsFile
	if timingsFile == "" {
		timingsFile = DefaultTimingsFile
	}
	targets := opt.Targets
	if targets == nil {
		targets = CommonTargets()
	}

	tree, err := readTree(ctx, root)
	if err != nil {
		return nil, fmt.Errorf("bundle: %w", err)
	}
	rep := &Report{Commit: tree.Commit, Dirty: len(tree.Dirty) > 0}
	warn := func(format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		rep.Warnings = append(rep.Warnings, msg)
		logf("bundle: WARNING: %s", msg)
	}
	if rep.Dirty {
		list := tree.Dirty
		more := ""
		if len(list) > 8 {
			list, more = list[:8], fmt.Sprintf(" and %d more", len(tree.Dirty)-8)
		}
		if !opt.AllowDirty {
			return nil, fmt.Errorf("bundle: the working tree differs from commit %s in %d tracked files (%s%s): commit or restore them, so that the bundle is exactly that commit (or allow a bundle marked dirty: PQREPRO_BUNDLE_DIRTY=1)",
				short(tree.Commit), len(tree.Dirty), strings.Join(list, ", "), more)
		}
		warn("the working tree differs from commit %s in %d tracked files (%s%s); the bundle archives them as they are and is marked dirty", short(tree.Commit), len(tree.Dirty), strings.Join(list, ", "), more)
	}
	version := opt.Version
	if version == "" {
		version = tree.Version
		if rep.Dirty {
			version += "-dirty"
		}
	}
	if !versionRE.MatchString(version) {
		return nil, fmt.Errorf("bundle: version %q is not usable in a file name: use letters, digits, '.', '_', '+' and '-'", version)
	}
	name := "pqrepro-" + version

	// Pass 1: list and hash every committed file, read the small ones
	// the appendix is made from.
	logf("bundle: commit %s, %d tracked files", short(tree.Commit), len(tree.Files))
	read := map[string]bool{"README.md": true, HardwareDoc: true, "go.mod": true, repro.LockFile: true, timingsFile: true}
	var files []*entry
	sums := map[string]string{}
	byPath := map[string]*entry{}
	var filesBytes int64
	for _, gf := range tree.Files {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if strings.ContainsAny(gf.Path, "\n\\") {
			return nil, fmt.Errorf("bundle: %q: a path with a newline or backslash cannot be listed in a SHA256SUMS file: rename it", gf.Path)
		}
		keep := read[gf.Path] || strings.HasPrefix(gf.Path, "data/") && path.Base(gf.Path) == provenance.FileName
		e, err := committedEntry(root, gf, keep)
		if errors.Is(err, os.ErrNotExist) && rep.Dirty {
			warn("%s is tracked but deleted in the working tree: left out", gf.Path)
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("bundle: %w", err)
		}
		files = append(files, e)
		byPath[e.Path] = e
		sums[e.Path] = e.SHA256
		filesBytes += e.Size
	}
	for _, need := range []string{repro.SumsFile, CitationFile, LicenseFile, DataLicenseFile} {
		if byPath[need] == nil {
			return nil, fmt.Errorf("bundle: %s is not committed: a bundle must carry it (commit it first)", need)
		}
	}
	for _, gen := range []string{ManifestFile, ArtifactFile, BundleSums} {
		if byPath[gen] != nil {
			return nil, fmt.Errorf("bundle: %s is committed, but the bundle generates a file of that name: rename the committed one", gen)
		}
	}
	for p := range byPath {
		if p == repro.DefaultStoreDir || strings.HasPrefix(p, repro.DefaultStoreDir+"/") {
			return nil, fmt.Errorf("bundle: %s is committed inside %s/, where the bundle puts the content store: remove it from Git", p, repro.DefaultStoreDir)
		}
	}
	var timings *Timings
	if e := byPath[timingsFile]; e != nil {
		if timings, err = parseTimings(timingsFile, e.Data); err != nil {
			return nil, fmt.Errorf("bundle: %w", err)
		}
	} else {
		warn("%s is not committed: the appendix says build, verify and paper are not measured (PQREPRO_BUNDLE_MEASURE=1 mage bundle measures them)", timingsFile)
	}

	// The content store: every blob a run refers to, checked.
	blobs, absent, runs, err := collectRuns(ctx, files, sums, store, logf)
	if err != nil {
		return nil, fmt.Errorf("bundle: %w", err)
	}
	if len(absent) > 0 {
		warn("%d content-store blobs referenced by the runs are not in %s: the bundle goes without them and its %s lists them (fetch them with `%s`, then bundle again)", len(absent), store.Dir, ArtifactFile, FetchCommand)
	}
	all := append([]*entry(nil), files...)
	var blobBytes int64
	for _, b := range blobs {
		all = append(all, &entry{Path: b.Path, Src: store.Path(b.SHA256), Size: b.Size, SHA256: b.SHA256})
		blobBytes += b.Size
	}

	// Generated metadata.
	m := &Manifest{
		Name: name, Version: version, Commit: tree.Commit, Dirty: rep.Dirty, DirtyFiles: tree.Dirty,
		SourceDateEpoch: epoch.Unix(), Files: len(files), FilesBytes: filesBytes,
		Blobs: blobs, BlobsBytes: blobBytes, AbsentBlobs: absent, Runs: runs, Format: archiveFormat,
		Tools:     map[string]string{"go": runtime.Version(), "git": gitVersion(ctx)},
		Generated: []string{ArtifactFile, BundleSums, ManifestFile},
	}
	for k, v := range opt.Tools {
		m.Tools[k] = v
	}
	gen := func(p string, b []byte) *entry {
		return &entry{Path: p, Data: b, Size: int64(len(b)), SHA256: repro.HashBytes(b)}
	}
	all = append(all,
		gen(ManifestFile, manifestJSON(m)),
		gen(ArtifactFile, artifactMD(artifactInput{M: m, Targets: targets, Timings: timings, TimeFile: timingsFile, Files: byPath})))
	all = append(all, gen(BundleSums, sumsFile(all)))

	// Pass 2: the archive, to a temporary file renamed at the end.
	outDir := opt.OutDir
	if outDir == "" {
		outDir = filepath.Join(root, filepath.FromSlash(DefaultOutDir))
	}
	out := filepath.Join(outDir, name+".tar.gz")
	var total int64
	for _, e := range all {
		total += e.Size
	}
	logf("bundle: writing %s: %d files (%s) and %d store blobs (%s)", out, len(files), size(filesBytes), len(blobs), size(blobBytes))
	f, err := atomicfile.Create(out, 0o644)
	if err != nil {
		return nil, fmt.Errorf("bundle: %w", err)
	}
	defer f.Abort()
	h := sha256.New()
	cw := &countWriter{w: io.MultiWriter(f, h)}
	next := int64(0)
	progress := func(done, total int64) {
		if total > 64<<20 && done >= next {
			logf("bundle: %3d%% of %s", done*100/total, size(total))
			next = done + total/10
		}
	}
	if err := writeArchive(ctx, cw, name, all, epoch, progress); err != nil {
		return nil, fmt.Errorf("bundle: %w", err)
	}
	if err := f.Commit(); err != nil {
		return nil, fmt.Errorf("bundle: %w", err)
	}
	rep.Path, rep.SHA256, rep.Size = out, hex.EncodeToString(h.Sum(nil)), cw.n
	rep.Files, rep.Blobs, rep.Absent = len(files), len(blobs), len(absent)
	logf("bundle: %s before compression, %s after", size(total), size(rep.Size))
	return rep, nil
}

// committedEntry describes one tracked file of the working tree, hashing
// its content. The mode comes from Git (100755 is executable), not from the
// file system, whose permission bits depend on the umask of whoever
// checked out. keep reads the content into memory.
func committedEntry(root string, gf gitFile, keep bool) (*entry, error) {
	p := filepath.Join(root, filepath.FromSlash(gf.Path))
	fi, err := os.Lstat(p)
	if err != nil {
		return nil, err
	}
	e := &entry{Path: gf.Path}
	switch gf.Mode {
	case "120000":
		if fi.Mode()&os.ModeSymlink == 0 {
			return nil, fmt.Errorf("%s is a symbolic link in Git but not in the working tree: restore it (git checkout -- %s)", gf.Path, gf.Path)
		}
		if e.Link, err = os.Readlink(p); err != nil {
			return nil, err
		}
		e.SHA256 = repro.HashBytes([]byte(e.Link))
		return e, nil
	case "100644", "100755":
		e.Exec = gf.Mode == "100755"
	case "160000":
		return nil, fmt.Errorf("%s is a Git submodule: bundles hold one repository; vendor it or drop the submodule", gf.Path)
	default:
		return nil, fmt.Errorf("%s: unknown Git mode %s", gf.Path, gf.Mode)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is a regular file in Git but not in the working tree (%v): restore it (git checkout -- %s)", gf.Path, fi.Mode().Type(), gf.Path)
	}
	if keep {
		if e.Data, err = os.ReadFile(p); err != nil {
			return nil, err
		}
		e.Size, e.SHA256 = int64(len(e.Data)), repro.HashBytes(e.Data)
		return e, nil
	}
	e.Src, e.Size = p, fi.Size()
	if e.SHA256, err = repro.HashFile(p); err != nil {
		return nil, err
	}
	return e, nil
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

func fileSize(p string) (int64, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
