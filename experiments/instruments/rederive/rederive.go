// Package rederive makes "capture -> per-connection records" a stage of
// the build. A run folder of Study A or B holds what was measured in the
// process (inproc.csv.gz), the records the runner derived from its packet
// captures (records.csv.gz, as recorded) and meta.json, which names every
// capture by its SHA-256. The captures are the raw data; the records are
// derived from them by the capture reader (experiments/instruments/capture) and the
// study's join, so the stage built by Stage puts that code under a code
// hash like any analysis code:
//
//   - where every capture of the run is present (compressed in the run
//     folder as <name>.pqcol, capture.EncodeCapture's columns, or
//     <name>.gz, uncompressed as <name>, or in the content store under
//     its SHA-256), the stage re-derives the records from the
//     packets and the in-process file and requires them to equal the
//     recorded records.csv.gz byte for byte; a difference fails the stage,
//     naming the file and the first differing record (the instrument
//     changed);
//   - where a capture is absent, it takes the recorded records and says so
//     once per run, also in verify (repro.Env.Notef);
//   - further derived files with captures of their own (Spec.Also: Study
//     B's transfer.csv.gz from its trimmed transfer captures, committed
//     with every run since issue 41) are re-derived and checked the same
//     way, whether the records' own captures are present or not.
//
// Either way the stage's output is the recorded records' bytes, which is
// what the analysis reads. A capture is checked against the SHA-256 in
// meta.json while it is read, so a truncated or corrupt capture is an
// error, never a source of wrong records.
package rederive

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path"
	"slices"
	"strings"

	"pqrepro/experiments/instruments/capture"
	"pqrepro/internal/atomicfile"
	"pqrepro/internal/repro"
)

// Files of a run folder the stage reads.
const (
	// InprocFile holds what the process measured about every connection
	// (the study's join package defines its columns).
	InprocFile = "inproc.csv.gz"
	// RecordsFile is the records as the runner derived them.
	RecordsFile = "records.csv.gz"
	// MetaFile is the run's provenance; its "files" map names the captures.
	MetaFile = "meta.json"
	// CaptureExt ends the name of every capture in meta.json's files.
	CaptureExt = ".pcapng"
	// GzipExt is appended to a capture's name when it is committed in the
	// run folder, compressed.
	GzipExt = ".gz"
	// ColumnsExt is appended instead when it is committed in columns
	// (capture.EncodeCapture; Study B's trimmed transfer captures).
	ColumnsExt = capture.CodecExt
)

// InRepoMaxBytes bounds the captures a runner commits in the run folder
// (gzip'd, beside the records). That is, a run whose captures total at
// most this many bytes uncompressed keeps them in git, so that a fresh
// clone re-derives its records from the packets; larger ones go to the
// content store. A quick run of Study A on both paths (about 16 MB: 7.6
// MB on loopback, 8.3 MB on the bridge; 13 MB gzip'd) and one of Study B
// (about 1.3 MB) are well below it.
const InRepoMaxBytes = 32 << 20

// InRepoLimit is a runner's limit for committing captures: max, or
// InRepoMaxBytes when max is 0; negative max means never (-1).
func InRepoLimit(max int64) int64 {
	switch {
	case max == 0:
		return InRepoMaxBytes
	case max < 0:
		return -1
	}
	return max
}

// A Capture is one capture a run refers to. That is, its name in
// meta.json's files (relative to the run folder) and the SHA-256 of its
// uncompressed bytes.
type Capture struct {
	Name   string
	SHA256 string
}

// Captures lists the captures meta.json's files refer to, sorted by name.
func Captures(metaJSON []byte) ([]Capture, error) {
	var m struct {
		Files map[string]string `json:"files"`
	}
	if err := json.Unmarshal(metaJSON, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", MetaFile, err)
	}
	var out []Capture
	for name, sum := range m.Files {
		if strings.HasSuffix(name, CaptureExt) {
			out = append(out, Capture{Name: name, SHA256: sum})
		}
	}
	slices.SortFunc(out, func(a, b Capture) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// A CorruptError says that a capture's bytes are not the ones meta.json
// names: it is truncated, damaged or another file.
type CorruptError struct {
	Path       string // where it was read
	Want, Got  string // SHA-256 in meta.json; of the bytes read ("" when unreadable)
	Underlying error  // a decompression or read error, if any
}

func (e *CorruptError) Error() string {
	what := "hashes to sha256:" + e.Got
	if e.Underlying != nil {
		what = "cannot be read to its end: " + e.Underlying.Error()
	}
	return fmt.Sprintf("capture %s %s, but meta.json names sha256:%s: it is truncated or corrupt; restore it (git checkout -- %s, or go run mage.go data:pull) instead of deriving records from it", e.Path, what, e.Want, e.Path)
}

func (e *CorruptError) Unwrap() error { return e.Underlying }

// checked reads a capture's uncompressed bytes and hashes them. At the end
// of the stream it returns a *CorruptError instead of io.EOF when the hash
// is not the expected one, so that no reader can mistake a truncated
// capture for a complete one.
type checked struct {
	r       io.Reader
	h       hash.Hash
	want    string
	path    string
	closers []io.Closer
	err     error
}

func (c *checked) Read(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.r.Read(p)
	c.h.Write(p[:n])
	switch {
	case err == io.EOF:
		if got := hex.EncodeToString(c.h.Sum(nil)); got != c.want {
			c.err = &CorruptError{Path: c.path, Want: c.want, Got: got}
			return n, c.err
		}
		c.err = io.EOF
	case err != nil:
		c.err = &CorruptError{Path: c.path, Want: c.want, Underlying: err}
		return n, c.err
	}
	return n, err
}

// Close reads what the consumer left, so that the whole capture is
// checked, and returns the check's error.
func (c *checked) Close() error {
	var err error
	if c.err == nil {
		_, err = io.Copy(io.Discard, c)
	} else if c.err != io.EOF {
		err = c.err
	}
	for _, cl := range slices.Backward(c.closers) {
		cl.Close()
	}
	return err
}

// openChecked opens the file at abs as a reader of the capture's
// uncompressed bytes, checked against want. It gunzips a name ending in
// GzipExt and decodes one ending in ColumnsExt.
func openChecked(abs, shown, want string) (io.ReadCloser, error) {
	if strings.HasSuffix(abs, ColumnsExt) {
		enc, err := os.ReadFile(abs)
		if err != nil {
			return nil, err
		}
		b, err := capture.DecodeCapture(enc)
		if err != nil {
			return nil, &CorruptError{Path: shown, Want: want, Underlying: err}
		}
		return &checked{r: bytes.NewReader(b), h: sha256.New(), want: want, path: shown}, nil
	}
	f, err := os.Open(abs)
	if err != nil {
		return nil, err
	}
	c := &checked{h: sha256.New(), want: want, path: shown, closers: []io.Closer{f}}
	br := bufio.NewReaderSize(f, 1<<20)
	c.r = br
	if strings.HasSuffix(abs, GzipExt) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			f.Close()
			return nil, &CorruptError{Path: shown, Want: want, Underlying: err}
		}
		zr.Multistream(false)
		c.r, c.closers = zr, append(c.closers, zr)
	}
	return c, nil
}

// Locator finds a run's captures: in the run folder (declared inputs of
// the stage) or in the content store.
type Locator struct {
	env    *repro.Env
	runDir string
	store  *repro.Store
	inputs map[string]bool
}

// NewLocator returns a Locator for the run folder runDir (relative to the
// stage's root) and the content store (nil: none).
func NewLocator(env *repro.Env, runDir string, store *repro.Store) *Locator {
	in := map[string]bool{}
	for _, f := range env.Inputs() {
		in[f] = true
	}
	return &Locator{env: env, runDir: runDir, store: store, inputs: in}
}

// Where says where the capture is. That is, the path of its file
// relative to the root (run folder) or the blob's path (store), and
// whether it is compressed (in columns or gzip'd, in that order of
// preference); ok is false when it is absent.
func (l *Locator) Where(c Capture) (where string, compressed, ok bool) {
	p := path.Join(l.runDir, c.Name)
	if l.inputs[p+ColumnsExt] {
		return p + ColumnsExt, true, true
	}
	if l.inputs[p+GzipExt] {
		return p + GzipExt, true, true
	}
	if l.inputs[p] {
		return p, false, true
	}
	if l.store != nil && len(c.SHA256) == 64 {
		b := l.store.Path(c.SHA256)
		if _, err := os.Stat(b); err == nil {
			return b, false, true
		}
	}
	return "", false, false
}

// Open opens the capture as a reader of its uncompressed bytes that
// fails (*CorruptError) unless they hash to c.SHA256. Closing it reads
// and checks what was not read.
func (l *Locator) Open(c Capture) (io.ReadCloser, error) {
	where, _, ok := l.Where(c)
	if !ok {
		return nil, fmt.Errorf("capture %s (sha256:%s) is not present", c.Name, c.SHA256)
	}
	abs := where
	if !path.IsAbs(where) {
		f, err := l.env.Open(where) // declared input: checks it is one
		if err != nil {
			return nil, err
		}
		abs = f.Name()
		f.Close()
	}
	return openChecked(abs, where, c.SHA256)
}

// OpenFile opens a capture file outside a stage (the runner's, before the
// run is committed) the same way. That is, checked against want,
// gunzipped when its name ends in GzipExt, decoded when in ColumnsExt.
func OpenFile(p, want string) (io.ReadCloser, error) {
	return openChecked(p, p, want)
}

// Derive is a study's derivation of records.csv.gz from its run. That
// is, the in-process file's bytes and a way to open each capture (named
// as in meta.json's files). The runner calls the same function at record
// time.
type Derive func(ctx context.Context, runDir string, read func(name string) ([]byte, error), open func(Capture) (io.ReadCloser, error), caps []Capture) ([]byte, error)

// Spec describes a records stage.
type Spec struct {
	Name, Doc string
	// Code are the packages of the reader and the join (Stage.Code).
	Code []string
	// RunDir is the run folder, relative to the root.
	RunDir string
	// Out is the derived records file the analysis reads.
	Out string
	// Store is the content store to look for captures in; nil: none. It
	// is not an input: a capture only decides whether the recorded
	// records are confirmed, never what the output is.
	Store *repro.Store
	// Derive derives the records from the run.
	Derive Derive
	// Also are further files of the run that the stage re-derives from
	// captures of their own and checks, without changing its output.
	Also []Also
}

// An Also is a further derived file of a run that the records stage checks.
//
// That is, a file the runner derived from its own captures (Study B's
// transfer.csv.gz from the trimmed transfer captures) that the stage
// re-derives and compares byte for byte when the run's meta.json names
// such captures and they are present; a run without them is as before.
type Also struct {
	File string // the recorded file, relative to the run folder
	What string // what its captures are called in notices ("trimmed captures")
	// Of reports whether a capture of meta.json's files is one of this
	// file's; the stage's own records read the captures no Also takes.
	Of     func(name string) bool
	Derive Derive
}

// Stage returns the stage "capture -> records" of a run (see the package
// documentation). Its inputs are the whole run folder, so a capture
// committed in it is an input.
func Stage(s Spec) *repro.Stage {
	return &repro.Stage{
		Name:     s.Name,
		Doc:      s.Doc,
		Code:     append(slices.Clone(s.Code), "experiments/instruments/rederive"),
		Inputs:   []string{s.RunDir},
		Outputs:  []string{s.Out},
		Confirms: path.Join(s.RunDir, RecordsFile),
		Run: func(ctx context.Context, env *repro.Env) error {
			out, err := Run(ctx, env, s)
			if err != nil {
				return err
			}
			return env.WriteFile(s.Out, out)
		},
	}
}

// Run does the stage's work and returns the records to write.
func Run(ctx context.Context, env *repro.Env, s Spec) ([]byte, error) {
	out, caps, err := records(ctx, env, s)
	if err != nil {
		return nil, err
	}
	for _, a := range s.Also {
		if err := also(ctx, env, s, a, caps); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// records re-derives (or takes) the run's records from the captures no
// Also takes, and returns them with every capture of meta.json.
func records(ctx context.Context, env *repro.Env, s Spec) ([]byte, []Capture, error) {
	rd := func(name string) ([]byte, error) { return env.ReadFile(path.Join(s.RunDir, name)) }
	recPath := path.Join(s.RunDir, RecordsFile)
	recorded, err := rd(RecordsFile)
	if err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", recPath, err)
	}
	meta, err := rd(MetaFile)
	if err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", path.Join(s.RunDir, MetaFile), err)
	}
	all, err := Captures(meta)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", s.RunDir, err)
	}
	caps := own(all, s.Also)
	loc := NewLocator(env, s.RunDir, s.Store)
	var absent []Capture
	for _, c := range caps {
		if _, _, ok := loc.Where(c); !ok {
			absent = append(absent, c)
		}
	}
	switch {
	case len(caps) == 0:
		env.Notef("%s: meta.json names no capture: records taken as recorded", s.RunDir)
		return recorded, all, nil
	case len(absent) > 0:
		env.Notef("%s: %s: records taken as recorded", s.RunDir, absentLine(absent, len(caps)))
		return recorded, all, nil
	}
	if _, err := env.Open(path.Join(s.RunDir, InprocFile)); err != nil {
		env.Notef("%s: captures present, but the run has no %s (recorded before it existed): records taken as recorded", s.RunDir, InprocFile)
		return recorded, all, nil
	}
	derived, err := s.Derive(ctx, s.RunDir, rd, loc.Open, caps)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: re-derive the records from the captures: %w", s.RunDir, err)
	}
	if err := Compare(recPath, recorded, derived); err != nil {
		return nil, nil, err
	}
	env.Notef("%s: records re-derived from %s: equal to the recorded ones byte for byte", s.RunDir, captureCount(caps))
	return derived, all, nil
}

// own returns the captures no Also takes.
func own(caps []Capture, also []Also) []Capture {
	var out []Capture
	for _, c := range caps {
		if !slices.ContainsFunc(also, func(a Also) bool { return a.Of(c.Name) }) {
			out = append(out, c)
		}
	}
	return out
}

// also checks one further derived file of the run (Spec.Also). It says
// so and returns nil when the run names none of its captures or some
// are absent, and fails unless the file re-derived equals the recorded
// one byte for byte.
func also(ctx context.Context, env *repro.Env, s Spec, a Also, all []Capture) error {
	var caps []Capture
	for _, c := range all {
		if a.Of(c.Name) {
			caps = append(caps, c)
		}
	}
	if len(caps) == 0 {
		return nil // a run recorded before them: as before
	}
	loc := NewLocator(env, s.RunDir, s.Store)
	var absent []Capture
	for _, c := range caps {
		if _, _, ok := loc.Where(c); !ok {
			absent = append(absent, c)
		}
	}
	if len(absent) > 0 {
		env.Notef("%s: %s: %s taken as recorded", s.RunDir, absentLine(absent, len(caps)), a.File)
		return nil
	}
	p := path.Join(s.RunDir, a.File)
	recorded, err := env.ReadFile(p)
	if err != nil {
		return fmt.Errorf("read %s: %w", p, err)
	}
	rd := func(name string) ([]byte, error) { return env.ReadFile(path.Join(s.RunDir, name)) }
	derived, err := a.Derive(ctx, s.RunDir, rd, loc.Open, caps)
	if err != nil {
		return fmt.Errorf("%s: re-derive %s from the %s: %w", s.RunDir, a.File, a.What, err)
	}
	if err := Compare(p, recorded, derived); err != nil {
		return err
	}
	env.Notef("%s: %s re-derived from %d %s (sha256:%s, ...): equal to the recorded one byte for byte", s.RunDir, a.File, len(caps), a.What, caps[0].SHA256[:min(16, len(caps[0].SHA256))])
	return nil
}

// captureCount names the captures in a notice: "capture sha256:<16 hex>"
// or "12 captures (sha256:<16 hex>, ...)".
func captureCount(caps []Capture) string {
	if len(caps) == 1 {
		return "capture sha256:" + caps[0].SHA256[:min(16, len(caps[0].SHA256))]
	}
	return fmt.Sprintf("%d captures (sha256:%s, ...)", len(caps), caps[0].SHA256[:min(16, len(caps[0].SHA256))])
}

// absentLine is the notice for absent captures: the hash of one, or the
// count and the first hash of several.
func absentLine(absent []Capture, of int) string {
	if len(absent) == 1 {
		return fmt.Sprintf("capture sha256:%s not present", absent[0].SHA256)
	}
	return fmt.Sprintf("%d of %d captures (sha256:%s, ...) not present", len(absent), of, absent[0].SHA256)
}

// A MismatchError says that records re-derived from the captures differ
// from the recorded ones: the instrument (the reader or the join) changed.
type MismatchError struct {
	Path       string // the recorded records file
	Line       int    // 1-based CSV line of the first difference (1 = header)
	Recorded   string // that line as recorded ("" past the end)
	Rederived  string // that line re-derived ("" past the end)
	OnlyOuters bool   // the CSV is equal; only the compressed bytes differ
}

func (e *MismatchError) Error() string {
	if e.OnlyOuters {
		return fmt.Sprintf("%s: re-derived from the captures, the same rows compress to other bytes: the records writer changed", e.Path)
	}
	return fmt.Sprintf("%s: re-derived from the captures, record %d (line %d) differs: the instrument (capture reader or join) changed\n  recorded:   %s\n  re-derived: %s",
		e.Path, e.Line-1, e.Line, orEnd(e.Recorded), orEnd(e.Rederived))
}

func orEnd(s string) string {
	if s == "" {
		return "(end of file)"
	}
	return s
}

// Compare checks that the re-derived records are the recorded ones byte
// for byte.
//
// Otherwise it returns a *MismatchError naming the file and the first
// differing line of the decompressed CSV.
func Compare(recPath string, recorded, derived []byte) error {
	if bytes.Equal(recorded, derived) {
		return nil
	}
	a, errA := gunzip(recorded)
	b, errB := gunzip(derived)
	if err := errors.Join(errA, errB); err != nil {
		return fmt.Errorf("%s: re-derived records differ and cannot be compared line by line: %w", recPath, err)
	}
	la, lb := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	for i := range max(len(la), len(lb)) {
		var x, y string
		if i < len(la) {
			x = la[i]
		}
		if i < len(lb) {
			y = lb[i]
		}
		if x != y {
			return &MismatchError{Path: recPath, Line: i + 1, Recorded: x, Rederived: y}
		}
	}
	return &MismatchError{Path: recPath, OnlyOuters: true}
}

func gunzip(b []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(zr)
}

// Gzip compresses a capture for committing it: deterministic bytes (no
// name, no time stamp: RFC 1952 section 2.3.1), best compression. It
// writes dst atomically and returns its SHA-256.
func Gzip(src, dst string) (string, error) {
	in, err := os.Open(src)
	if err != nil {
		return "", err
	}
	defer in.Close()
	out, err := atomicfile.Create(dst, 0o644)
	if err != nil {
		return "", err
	}
	defer out.Abort()
	h := sha256.New()
	zw, err := gzip.NewWriterLevel(io.MultiWriter(out, h), gzip.BestCompression)
	if err != nil {
		return "", err
	}
	zw.Header = gzip.Header{OS: 255}
	if _, err := io.Copy(zw, bufio.NewReaderSize(in, 1<<20)); err != nil {
		return "", fmt.Errorf("compress %s: %w", src, err)
	}
	if err := zw.Close(); err != nil {
		return "", err
	}
	if err := out.Commit(); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Columns stores a capture for committing it in columns
// (capture.EncodeCapture: lossless, smaller than gzip for header-only
// packets). It writes dst atomically and returns its SHA-256.
func Columns(src, dst string) (string, error) {
	in, err := os.ReadFile(src)
	if err != nil {
		return "", err
	}
	enc, err := capture.EncodeCapture(in)
	if err != nil {
		return "", fmt.Errorf("encode %s: %w", src, err)
	}
	out, err := atomicfile.Create(dst, 0o644)
	if err != nil {
		return "", err
	}
	defer out.Abort()
	if _, err := out.Write(enc); err != nil {
		return "", err
	}
	if err := out.Commit(); err != nil {
		return "", err
	}
	sum := sha256.Sum256(enc)
	return hex.EncodeToString(sum[:]), nil
}
