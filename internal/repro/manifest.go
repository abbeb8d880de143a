package repro

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"pqrepro/internal/atomicfile"
)

// ManifestFile is the seal of a run folder. Written by Run.Commit (or, for
// runs that predate manifests, once by `pqrepro seal`), it lists every
// other file of the folder and every content-store blob the run's
// meta.json refers to, by SHA-256. The spec's pin records the manifest's
// own SHA-256, so that changing a file of a pinned run means changing the
// file, the manifest and the pin, and every check says which.
//
// The format is what `sha256sum -c` reads (run inside the folder): the
// hex digest, two spaces, the path relative to the folder, sorted by
// path. Lines starting with '#' are comments to sha256sum; three kinds
// carry meaning here:
//
//	# pqrepro run manifest <study>/<run-id>
//	# blob <sha256>  <name in meta.json "files">
//	# blob-size <sha256> <bytes>
//
// and any other comment is free text. A blob-size line records the size
// of a blob named by a blob line, read from the content store at seal
// time: a pull never reads more from a data remote than this. Runs sealed
// before blob-size lines existed have none (and are never rewritten); to
// sha256sum and to older readers the line is a comment.
const ManifestFile = "MANIFEST.sha256"

// NotesFile is a run folder's README.md: notes for people about the run
// (for example why a manifest was added later). It is sealed with the
// folder like any file, but directory inputs of stages leave it out, as
// they leave out the manifest: both are about the data, not data.
const NotesFile = "README.md"

// metaFile is the provenance file of a run (internal/provenance.FileName;
// repro does not import provenance).
const metaFile = "meta.json"

const manifestHeader = "# pqrepro run manifest "

// A Manifest is the parsed content of a MANIFEST.sha256.
type Manifest struct {
	// Run is "<study>/<run-id>", the folder the manifest seals.
	Run string
	// Files maps each file of the folder but the manifest (slash path
	// relative to the folder) to its SHA-256.
	Files map[string]string
	// Blobs maps the names meta.json gives content-store files (such as
	// capture.pcapng) to their SHA-256.
	Blobs map[string]string
	// BlobSizes maps a blob's SHA-256 to its size in bytes, for the blobs
	// that were in the content store when the run was sealed; nil or
	// missing entries mean the size was not recorded.
	BlobSizes map[string]int64
}

const blobSizePrefix = "# blob-size "

// Marshal renders the manifest: header, blob comments, then the
// sha256sum lines, each group sorted.
func (m *Manifest) Marshal() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s%s\n", manifestHeader, m.Run)
	b.WriteString("# Every file of this run folder but this one, by SHA-256: `sha256sum -c " + ManifestFile + "` checks them.\n")
	if len(m.Blobs) > 0 {
		b.WriteString("# Content-store blobs the run's meta.json refers to (in .store/sha256/<2 hex>/<62 hex>):\n")
		for _, name := range slices.Sorted(maps.Keys(m.Blobs)) {
			fmt.Fprintf(&b, "# blob %s  %s\n", m.Blobs[name], name)
		}
		for _, sum := range slices.Sorted(maps.Keys(m.BlobSizes)) {
			fmt.Fprintf(&b, "%s%s %d\n", blobSizePrefix, sum, m.BlobSizes[sum])
		}
	}
	for _, f := range slices.Sorted(maps.Keys(m.Files)) {
		fmt.Fprintf(&b, "%s  %s\n", m.Files[f], f)
	}
	return b.Bytes()
}

// ParseManifest parses a MANIFEST.sha256, rejecting anything it does not
// understand.
//
// It rejects a malformed line, a path that leaves the folder, a file
// listed twice, naming the line.
func ParseManifest(name string, b []byte) (*Manifest, error) {
	m := &Manifest{Files: map[string]string{}, Blobs: map[string]string{}}
	sizeLine := map[string]int{} // blob-size lines by SHA-256, to name the line of a stray one
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case n > 1 && strings.HasPrefix(line, blobSizePrefix):
			sum, size, ok := parseBlobSize(strings.TrimPrefix(line, blobSizePrefix))
			if !ok {
				return nil, fmt.Errorf("%s:%d: a blob-size line is `%s<sha256> <bytes>` (decimal, no sign, no leading zero)", name, n, blobSizePrefix)
			}
			if _, dup := sizeLine[sum]; dup {
				return nil, fmt.Errorf("%s:%d: the size of blob %s is recorded twice", name, n, short(sum))
			}
			sizeLine[sum] = n
			if m.BlobSizes == nil {
				m.BlobSizes = map[string]int64{}
			}
			m.BlobSizes[sum] = size
		case n == 1:
			run, ok := strings.CutPrefix(line, manifestHeader)
			if !ok || strings.Count(run, "/") != 1 || !runIDPart.MatchString(path.Dir(run)) {
				return nil, fmt.Errorf("%s:1: not a pqrepro run manifest (want %q followed by <study>/<run-id>)", name, manifestHeader)
			}
			m.Run = run
		case strings.HasPrefix(line, "# blob "):
			e, err := ParseSums(name, []byte(strings.TrimPrefix(line, "# blob ")))
			if err != nil || len(e) != 1 {
				return nil, fmt.Errorf("%s:%d: a blob line is `# blob <sha256>  <name>`%s", name, n, innerReason(name, err))
			}
			if _, dup := m.Blobs[e[0].Path]; dup {
				return nil, fmt.Errorf("%s:%d: blob %s is listed twice", name, n, e[0].Path)
			}
			m.Blobs[e[0].Path] = e[0].SHA256
		case strings.HasPrefix(line, "#") || line == "":
		default:
			e, err := ParseSums(name, []byte(line))
			if err != nil {
				return nil, fmt.Errorf("%s:%d: not a `sha256sum` line%s", name, n, innerReason(name, err))
			}
			if len(e) != 1 {
				return nil, fmt.Errorf("%s:%d: not a `sha256sum` line", name, n)
			}
			if _, dup := m.Files[e[0].Path]; dup || e[0].Path == ManifestFile {
				return nil, fmt.Errorf("%s:%d: %s is listed twice or is the manifest itself", name, n, e[0].Path)
			}
			m.Files[e[0].Path] = e[0].SHA256
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	if m.Run == "" {
		return nil, fmt.Errorf("%s: empty: not a pqrepro run manifest", name)
	}
	if len(sizeLine) > 0 {
		named := map[string]bool{}
		for _, sum := range m.Blobs {
			named[sum] = true
		}
		for _, sum := range slices.Sorted(maps.Keys(sizeLine)) {
			if !named[sum] {
				return nil, fmt.Errorf("%s:%d: a size is recorded for blob %s, which no blob line names", name, sizeLine[sum], short(sum))
			}
		}
	}
	return m, nil
}

// parseBlobSize parses "<sha256> <bytes>", the bytes in canonical
// decimal (what Marshal writes), so that a manifest has one spelling.
func parseBlobSize(s string) (string, int64, bool) {
	sum, num, ok := strings.Cut(s, " ")
	if !ok || !isSHA256(sum) {
		return "", 0, false
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 || strconv.FormatInt(n, 10) != num {
		return "", 0, false
	}
	return sum, n, true
}

// innerReason is ParseSums' error about the one line it was given,
// without its own "name:1:" (the line number in the manifest is the
// caller's), as " (reason)"; "" for no error.
func innerReason(name string, err error) string {
	if err == nil {
		return ""
	}
	return " (" + strings.TrimPrefix(err.Error(), name+":1: ") + ")"
}

// folderFiles lists every entry below dir (slash paths relative to it),
// hidden ones included, except the manifest at the top. A symbolic link
// or other non-regular file is returned in odd: a run holds only files.
func folderFiles(dir string) (files, odd []string, err error) {
	files, odd, _, err = folderEntries(dir)
	return files, odd, err
}

// folderEntries is folderFiles with the empty folders below dir, which
// a manifest cannot record (it lists files) and a sealed run so never
// has.
func folderEntries(dir string) (files, odd, empty []string, err error) {
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != dir && d.IsDir() {
			if ents, err := os.ReadDir(p); err == nil && len(ents) == 0 {
				rel, _ := filepath.Rel(dir, p)
				empty = append(empty, filepath.ToSlash(rel))
			}
		}
		if p == dir || d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		switch {
		case rel == ManifestFile:
		case d.Type().IsRegular():
			files = append(files, rel)
		default:
			odd = append(odd, rel)
		}
		return nil
	})
	slices.Sort(files)
	return files, odd, empty, err
}

// metaFiles reads the "files" map of the run's meta.json; a run without
// meta.json has none.
func metaFiles(dir string) (map[string]string, error) {
	b, err := os.ReadFile(filepath.Join(dir, metaFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var m struct {
		Files map[string]string `json:"files"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s is not valid JSON: %w", filepath.Join(dir, metaFile), err)
	}
	return m.Files, nil
}

func isSHA256(s string) bool { return len(s) == 64 && strings.Trim(s, "0123456789abcdef") == "" }

// NewManifest reads the run folder dir, named run ("<study>/<run-id>"),
// and returns its manifest. It fails when the folder holds anything but
// regular files and directories, when meta.json's "files" map gives a
// file of the folder another hash than its content has, or when an entry
// of that map is neither a file of the folder nor a SHA-256 (a blob).
//
// The size of each blob that is in the run's content store (see
// [StoreFor]) is recorded too; a blob not there gets no size.
func NewManifest(dir, run string) (*Manifest, error) {
	return NewManifestStore(dir, run, StoreFor(dir))
}

// StoreFor is the default content store of the repository holding the
// run folder dir (<root>/data/<study>/<run>): OpenStore(<root>, ""). A
// caller that knows the configured store (PQREPRO_STORE) passes it to
// NewManifestStore or WriteManifestStore instead.
func StoreFor(dir string) *Store {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	return OpenStore(filepath.Dir(filepath.Dir(filepath.Dir(dir))), "")
}

// NewManifestStore is NewManifest with the blobs' sizes read from store
// (nil: none recorded).
func NewManifestStore(dir, run string, store *Store) (*Manifest, error) {
	files, odd, err := folderFiles(dir)
	if err != nil {
		return nil, fmt.Errorf("manifest of %s: %w", run, err)
	}
	if len(odd) > 0 {
		return nil, fmt.Errorf("manifest of %s: %s is not a regular file: a run folder holds files and folders only", run, strings.Join(odd, ", "))
	}
	m := &Manifest{Run: run, Files: map[string]string{}, Blobs: map[string]string{}}
	for _, f := range files {
		sum, err := HashFile(filepath.Join(dir, filepath.FromSlash(f)))
		if err != nil {
			return nil, fmt.Errorf("manifest of %s: %w", run, err)
		}
		m.Files[f] = sum
	}
	meta, err := metaFiles(dir)
	if err != nil {
		return nil, fmt.Errorf("manifest of %s: %w", run, err)
	}
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(meta)) {
		want := meta[name]
		if got, ok := m.Files[path.Clean(name)]; ok {
			if got != want {
				errs = append(errs, fmt.Errorf("meta.json lists %s with sha256 %s, but the file hashes to %s", name, short(want), short(got)))
			}
			continue
		}
		if !isSHA256(want) {
			errs = append(errs, fmt.Errorf("meta.json files[%q] = %q is neither a file of the run nor a content-store SHA-256", name, want))
			continue
		}
		m.Blobs[name] = want
		if store == nil {
			continue
		}
		// Stat, not a re-hash: the run stored the blob moments ago, and
		// a pull checks the SHA-256 of whatever arrives anyway.
		if fi, err := os.Stat(store.Path(want)); err == nil && fi.Mode().IsRegular() {
			if m.BlobSizes == nil {
				m.BlobSizes = map[string]int64{}
			}
			m.BlobSizes[want] = fi.Size()
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("manifest of %s: %w", run, errors.Join(errs...))
	}
	return m, nil
}

// WriteManifest seals the run folder dir (named "<study>/<run-id>") with
// a new MANIFEST.sha256 and returns the manifest's SHA-256, the value a
// spec pins. It refuses a folder that is sealed already: a manifest is
// written once.
func WriteManifest(dir, run string) (string, error) {
	return WriteManifestStore(dir, run, StoreFor(dir))
}

// WriteManifestStore is WriteManifest with the blobs' sizes read from
// store.
func WriteManifestStore(dir, run string, store *Store) (string, error) {
	p := filepath.Join(dir, ManifestFile)
	if _, err := os.Lstat(p); err == nil {
		return "", fmt.Errorf("%s is sealed already (%s exists): a manifest is written once; record a new run to change data", run, ManifestFile)
	}
	m, err := NewManifestStore(dir, run, store)
	if err != nil {
		return "", err
	}
	b := m.Marshal()
	if err := atomicfile.WriteFile(p, b, 0o644); err != nil {
		return "", fmt.Errorf("seal %s: %w", run, err)
	}
	return HashBytes(b), nil
}

// RunCheck is what CheckRun found in one run folder.
type RunCheck struct {
	// Problems name each altered, missing or extra file (paths relative
	// to the repository root), and what to do.
	Problems []Problem
	// Files and Blobs count what was checked; BlobsAbsent counts blobs
	// not in the local content store (a fresh clone has none), which
	// cannot be checked here and are not a problem.
	Files, Blobs, BlobsAbsent int
	// BlobsInRun counts blobs committed gzip'd in the run folder itself
	// (<name>.gz is a file of the manifest): the .gz is checked as a file,
	// and the records stage re-hashes its content against meta.json.
	BlobsInRun int
}

// CheckRun compares a run folder with its manifest, and the manifest with
// its pin.
//
// The run folder is runRel (slash path relative to root,
// data/<study>/<run-id>) with its manifest, and the manifest with pinnedSHA,
// the SHA-256 that pinnedBy (for example "experiments/tls.toml [runs] full")
// records for it; with pinnedBy empty the manifest is taken as it is (an
// unpinned run). Files are hashed with h (nil: every file is read); blobs
// present in store are checked, absent ones counted.
func CheckRun(root, runRel, pinnedSHA, pinnedBy string, h *Hasher, store *Store) RunCheck {
	if h == nil {
		h = &Hasher{}
	}
	var rc RunCheck
	problem := func(p, format string, args ...any) {
		rc.Problems = append(rc.Problems, Problem{Path: p, What: fmt.Sprintf(format, args...)})
	}
	dir := filepath.Join(root, filepath.FromSlash(runRel))
	study := path.Base(path.Dir(runRel))
	restore := func(p string) string {
		return fmt.Sprintf("restore it with `git checkout -- %s`, or record a new run (`mage %s:run`) and pin it", p, study)
	}
	mp := runRel + "/" + ManifestFile
	b, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	switch {
	case errors.Is(err, os.ErrNotExist):
		problem(mp, "missing: the run is not sealed; %s (a run committed before manifests existed is sealed once with `go run ./cmd/pqrepro seal %s`)", restore(mp), runRel)
		return rc
	case err != nil:
		problem(mp, "unreadable: %v", err)
		return rc
	}
	if got := HashBytes(b); pinnedBy != "" && pinnedSHA != got {
		problem(mp, "altered: sha256 %s, but %s pins %s: the manifest or the pin was edited; restore both (`git checkout -- %s` and the spec), or record a new run", short(got), pinnedBy, short(pinnedSHA), mp)
		return rc
	}
	m, err := ParseManifest(mp, b)
	if err != nil {
		problem(mp, "%v", err)
		return rc
	}
	if want := path.Base(path.Dir(runRel)) + "/" + path.Base(runRel); m.Run != want {
		problem(mp, "seals %s, not %s: a manifest was copied between runs; %s", m.Run, want, restore(mp))
	}
	files, odd, empty, err := folderEntries(dir)
	if err != nil {
		problem(runRel, "unreadable: %v", err)
		return rc
	}
	present := map[string]bool{}
	for _, f := range odd {
		if _, sealed := m.Files[f]; sealed {
			// Sealed as a regular file, now a symbolic link (or a device,
			// a pipe): one finding, not "extra" and "missing" at once.
			present[f] = true
			problem(runRel+"/"+f, "replaced: sealed as a regular file, now a symbolic link or other non-regular file; %s", restore(runRel+"/"+f))
			continue
		}
		problem(runRel+"/"+f, "extra: not a regular file, and not in the sealed run; remove it, or record a new run: a sealed run gains no files")
	}
	for _, d := range empty {
		problem(runRel+"/"+d, "extra: an empty folder, not in the sealed run (a manifest lists files only); remove it")
	}
	for _, f := range files {
		present[f] = true
		p := runRel + "/" + f
		want, ok := m.Files[f]
		if !ok {
			problem(p, "extra file: not in %s; remove it, or record a new run: a sealed run gains no files", ManifestFile)
			continue
		}
		rc.Files++
		got, err := h.Hash(filepath.Join(dir, filepath.FromSlash(f)))
		switch {
		case err != nil:
			problem(p, "unreadable: %v", err)
		case got != want:
			problem(p, "content differs from the sealed run: %s lists sha256 %s, file has %s; %s", ManifestFile, short(want), short(got), restore(p))
		}
	}
	for _, f := range slices.Sorted(maps.Keys(m.Files)) {
		if !present[f] {
			p := runRel + "/" + f
			problem(p, "missing (listed in %s); %s", ManifestFile, restore(p))
		}
	}
	// The run's own record must agree with its seal: a manifest written
	// by hand to match altered data is caught unless meta.json is
	// altered too.
	meta, err := metaFiles(dir)
	if err != nil {
		problem(runRel+"/"+metaFile, "%v", err)
	}
	for _, name := range slices.Sorted(maps.Keys(meta)) {
		sealed, ok := m.Files[path.Clean(name)]
		if !ok {
			sealed, ok = m.Blobs[name]
		}
		if ok && sealed != meta[name] {
			problem(runRel+"/"+path.Clean(name), "meta.json lists sha256 %s, %s %s; %s", short(meta[name]), ManifestFile, short(sealed), restore(runRel+"/"+metaFile))
		}
	}
	if store == nil {
		store = OpenStore(root, "")
	}
	for _, name := range slices.Sorted(maps.Keys(m.Blobs)) {
		sum := m.Blobs[name]
		if _, inRun := m.Files[path.Clean(name)+".gz"]; inRun {
			rc.BlobsInRun++
			continue
		}
		bp := store.Path(sum)
		if _, err := os.Stat(bp); errors.Is(err, os.ErrNotExist) {
			rc.BlobsAbsent++
			continue
		}
		rc.Blobs++
		shown := bp
		if rel, err := filepath.Rel(root, bp); err == nil && filepath.IsLocal(rel) {
			shown = filepath.ToSlash(rel)
		}
		got, err := h.Hash(bp)
		switch {
		case err != nil:
			problem(shown, "content-store blob %s of %s is unreadable: %v", name, runRel, err)
		case got != sum:
			problem(shown, "content differs: content-store blob %s of %s should hash to %s, has %s; delete it and copy it again from the machine that recorded the run or an artifact bundle", name, runRel, short(sum), short(got))
		}
	}
	return rc
}
