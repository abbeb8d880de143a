package rederive

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pqrepro/experiments/instruments/capture"
	"pqrepro/internal/repro"
)

const runDir = "data/tls/20260101T000000Z-quick"

func gz(t *testing.T, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write([]byte(s))
	zw.Close()
	return b.Bytes()
}

// fixture is a repository with one run: records.csv.gz, inproc.csv.gz and
// meta.json naming one capture; the capture itself is placed by each test.
type fixture struct {
	root, store string
	capture     []byte // uncompressed
	sum         string
	records     []byte
	notes       bytes.Buffer
	derived     int // calls of derive
}

func newFixture(t *testing.T) *fixture {
	f := &fixture{root: t.TempDir(), store: t.TempDir(), capture: []byte("pcapng packets\n")}
	f.sum = repro.HashBytes(f.capture)
	f.records = gz(t, "seq,ths_ns\n0,100\n1,200\n")
	write := func(name string, b []byte) {
		p := filepath.Join(f.root, runDir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(RecordsFile, f.records)
	write(InprocFile, gz(t, "seq\n0\n1\n"))
	write(MetaFile, []byte(`{"files": {"capture.pcapng": "`+f.sum+`", "records.csv.gz": "x"}}`))
	return f
}

// derive is a fake study: the records are the capture's content turned
// into the recorded CSV when the capture is the expected one.
func (f *fixture) derive(ctx context.Context, dir string, read func(string) ([]byte, error), open func(Capture) (io.ReadCloser, error), caps []Capture) ([]byte, error) {
	f.derived++
	rc, err := open(caps[0])
	if err != nil {
		return nil, err
	}
	b, err := io.ReadAll(rc)
	if cerr := rc.Close(); cerr != nil {
		return nil, cerr
	}
	if err != nil {
		return nil, err
	}
	if strings.Contains(string(b), "changed") {
		return gzip2(b), nil
	}
	return f.records, nil
}

func gzip2(b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write([]byte("seq,ths_ns\n0,100\n1,201\n"))
	zw.Close()
	return buf.Bytes()
}

func (f *fixture) build(t *testing.T) error {
	t.Helper()
	st := Stage(Spec{Name: "tls:records-quick", RunDir: runDir, Out: "results/records/tls-quick.csv.gz",
		Store: &repro.Store{Dir: f.store}, Derive: f.derive})
	e := &repro.Engine{Root: f.root, CodeRoot: filepath.Join("..", "..", ".."), Stages: []*repro.Stage{st}, Log: io.Discard, Notices: &f.notes}
	_, err := e.Build(context.Background())
	return err
}

func (f *fixture) output(t *testing.T) []byte {
	b, err := os.ReadFile(filepath.Join(f.root, "results/records/tls-quick.csv.gz"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestAbsentCaptureTakesRecordsOnce(t *testing.T) {
	f := newFixture(t)
	if err := f.build(t); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(f.output(t), f.records) || f.derived != 0 {
		t.Errorf("output equal %v, derive called %d times", bytes.Equal(f.output(t), f.records), f.derived)
	}
	want := runDir + ": capture sha256:" + f.sum + " not present: records taken as recorded"
	if got := f.notes.String(); strings.Count(got, "not present") != 1 || !strings.Contains(got, want) {
		t.Errorf("notices:\n%s\nwant once: %s", got, want)
	}
}

func TestCaptureInRunFolderOrStore(t *testing.T) {
	for _, where := range []string{"gz", "plain", "store"} {
		t.Run(where, func(t *testing.T) {
			f := newFixture(t)
			switch where {
			case "gz":
				os.WriteFile(filepath.Join(f.root, runDir, "capture.pcapng.gz"), gz(t, string(f.capture)), 0o644)
			case "plain":
				os.WriteFile(filepath.Join(f.root, runDir, "capture.pcapng"), f.capture, 0o644)
			case "store":
				src := filepath.Join(t.TempDir(), "c")
				os.WriteFile(src, f.capture, 0o644)
				if _, err := (&repro.Store{Dir: f.store}).Put(src); err != nil {
					t.Fatal(err)
				}
			}
			if err := f.build(t); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(f.output(t), f.records) || f.derived != 1 || !strings.Contains(f.notes.String(), "re-derived from capture sha256:") {
				t.Errorf("derived %d times; notices %q", f.derived, f.notes.String())
			}
		})
	}
}

func TestDifferentRecordsFail(t *testing.T) {
	f := newFixture(t)
	f.capture = []byte("changed packets\n")
	f.sum = repro.HashBytes(f.capture)
	os.WriteFile(filepath.Join(f.root, runDir, MetaFile), []byte(`{"files": {"capture.pcapng": "`+f.sum+`"}}`), 0o644)
	os.WriteFile(filepath.Join(f.root, runDir, "capture.pcapng.gz"), gz(t, string(f.capture)), 0o644)
	err := f.build(t)
	var me *MismatchError
	if !errors.As(err, &me) || me.Path != runDir+"/"+RecordsFile || me.Line != 3 || me.Recorded != "1,200" || me.Rederived != "1,201" {
		t.Fatalf("err = %v (%+v)", err, me)
	}
	if _, serr := os.Stat(filepath.Join(f.root, "results/records/tls-quick.csv.gz")); serr == nil {
		t.Error("a failed stage wrote its output")
	}
}

func TestCorruptCaptureFails(t *testing.T) {
	cases := map[string]func(f *fixture) []byte{
		"truncated gzip": func(f *fixture) []byte { b := gz(t, string(f.capture)); return b[:len(b)-6] },
		"other content":  func(f *fixture) []byte { return gz(t, "other packets\n") },
		"not gzip":       func(f *fixture) []byte { return []byte("plain text") },
	}
	for name, content := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t)
			os.WriteFile(filepath.Join(f.root, runDir, "capture.pcapng.gz"), content(f), 0o644)
			err := f.build(t)
			var ce *CorruptError
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), "capture.pcapng.gz") || !strings.Contains(err.Error(), "truncated or corrupt") {
				t.Fatalf("err = %v, want a *CorruptError naming the file", err)
			}
		})
	}
}

func TestNoInprocTakesRecords(t *testing.T) {
	f := newFixture(t)
	os.Remove(filepath.Join(f.root, runDir, InprocFile))
	os.WriteFile(filepath.Join(f.root, runDir, "capture.pcapng"), f.capture, 0o644)
	if err := f.build(t); err != nil {
		t.Fatal(err)
	}
	if f.derived != 0 || !strings.Contains(f.notes.String(), "no inproc.csv.gz") {
		t.Errorf("derived %d; notices %q", f.derived, f.notes.String())
	}
}

func TestCompareOnlyCompression(t *testing.T) {
	text := strings.Repeat("x,y\n", 100)
	a := gz(t, text)
	var b bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&b, gzip.NoCompression)
	zw.Write([]byte(text))
	zw.Close()
	var me *MismatchError
	if err := Compare("r.csv.gz", a, b.Bytes()); !errors.As(err, &me) || !me.OnlyOuters {
		t.Errorf("err = %v", err)
	}
	if err := Compare("r.csv.gz", a, a); err != nil {
		t.Error(err)
	}
}

func TestGzipDeterministic(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "c.pcapng")
	os.WriteFile(src, bytes.Repeat([]byte("packet "), 1000), 0o644)
	s1, err := Gzip(src, filepath.Join(dir, "a.gz"))
	if err != nil {
		t.Fatal(err)
	}
	s2, _ := Gzip(src, filepath.Join(dir, "b.gz"))
	rc, err := OpenFile(filepath.Join(dir, "a.gz"), repro.HashBytes(bytes.Repeat([]byte("packet "), 1000)))
	if err != nil {
		t.Fatal(err)
	}
	if s1 != s2 || rc.Close() != nil {
		t.Errorf("gzip not deterministic or not readable back: %s %s", s1, s2)
	}
}

// A further derived file (Spec.Also) is re-derived from its own captures
// and checked, whether the stage's own captures are present or not; a
// run whose meta.json names none of its captures is as before; a file
// that differs fails the stage.
func TestAlsoFile(t *testing.T) {
	trimmed := []byte("trimmed packets\n")
	xfer := gz(t, "seq,ttlb_ns\n0,300\n")
	for _, tc := range []struct {
		name          string
		named, commit bool   // meta.json names the trimmed capture; it is in the run folder
		content       []byte // the trimmed capture's bytes
		want          string // in the notices; "" with an error
		err           bool
		columns       bool // committed in columns (ColumnsExt), not gzip'd
		damage        bool // the committed file has a byte flipped
	}{
		{name: "re-derived", named: true, commit: true, content: trimmed, want: "transfer.csv.gz re-derived from 1 trimmed captures (sha256:"},
		{name: "re-derived from columns", named: true, commit: true, columns: true, content: trimmed, want: "transfer.csv.gz re-derived from 1 trimmed captures (sha256:"},
		{name: "columns damaged", named: true, commit: true, columns: true, damage: true, content: trimmed, err: true},
		{name: "absent", named: true, content: trimmed, want: "not present: transfer.csv.gz taken as recorded"},
		{name: "not named", commit: true, content: trimmed},
		{name: "differs", named: true, commit: true, content: []byte("changed trimmed\n"), err: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			sum := repro.HashBytes(tc.content)
			files := `"capture.pcapng": "` + f.sum + `"`
			if tc.named {
				files += `, "trimmed/s.pcapng": "` + sum + `"`
			}
			os.WriteFile(filepath.Join(f.root, runDir, MetaFile), []byte(`{"files": {`+files+`}}`), 0o644)
			os.WriteFile(filepath.Join(f.root, runDir, "transfer.csv.gz"), xfer, 0o644)
			if tc.commit {
				os.MkdirAll(filepath.Join(f.root, runDir, "trimmed"), 0o755)
				name, b := "trimmed/s.pcapng.gz", gz(t, string(tc.content))
				if tc.columns {
					var err error
					name = "trimmed/s.pcapng" + ColumnsExt
					if b, err = capture.EncodeCapture(tc.content); err != nil {
						t.Fatal(err)
					}
				}
				if tc.damage {
					b[len(b)/2] ^= 1
				}
				os.WriteFile(filepath.Join(f.root, runDir, name), b, 0o644)
			}
			var got [][]Capture
			also := Also{File: "transfer.csv.gz", What: "trimmed captures", Of: func(n string) bool { return strings.HasPrefix(n, "trimmed/") },
				Derive: func(ctx context.Context, dir string, read func(string) ([]byte, error), open func(Capture) (io.ReadCloser, error), caps []Capture) ([]byte, error) {
					got = append(got, caps)
					rc, err := open(caps[0])
					if err != nil {
						return nil, err
					}
					b, _ := io.ReadAll(rc)
					if err := rc.Close(); err != nil {
						return nil, err
					}
					if bytes.Equal(b, trimmed) {
						return xfer, nil
					}
					return gz(t, "seq,ttlb_ns\n0,301\n"), nil
				}}
			st := Stage(Spec{Name: "net:records-quick", RunDir: runDir, Out: "results/records/tls-quick.csv.gz",
				Store: &repro.Store{Dir: f.store}, Derive: f.derive, Also: []Also{also}})
			e := &repro.Engine{Root: f.root, CodeRoot: filepath.Join("..", "..", ".."), Stages: []*repro.Stage{st}, Log: io.Discard, Notices: &f.notes}
			_, err := e.Build(context.Background())
			var me *MismatchError
			switch {
			case tc.err && tc.damage:
				var ce *CorruptError
				if !errors.As(err, &ce) || !errors.Is(err, capture.ErrCodec) {
					t.Fatalf("err = %v, want a corrupt capture", err)
				}
				return
			case tc.err:
				if !errors.As(err, &me) || me.Path != runDir+"/transfer.csv.gz" {
					t.Fatalf("err = %v, want a mismatch of transfer.csv.gz", err)
				}
				return
			case err != nil:
				t.Fatal(err)
			}
			if !bytes.Equal(f.output(t), f.records) || f.derived != 0 {
				t.Errorf("the stage's own output changed, or its records were derived without their capture (%d)", f.derived)
			}
			if tc.want == "" && (len(got) > 0 || strings.Contains(f.notes.String(), "transfer.csv.gz")) {
				t.Errorf("a run that names no trimmed capture: derived %d times, notices %q", len(got), f.notes.String())
			}
			if tc.want != "" && !strings.Contains(f.notes.String(), tc.want) {
				t.Errorf("notices %q, want %q", f.notes.String(), tc.want)
			}
			for _, caps := range got {
				if len(caps) != 1 || caps[0].Name != "trimmed/s.pcapng" {
					t.Errorf("the further file's derive got %v, want only its trimmed capture", caps)
				}
			}
		})
	}
}
