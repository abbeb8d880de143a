package netjoin

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"pqrepro/datasets/netdata"
	"pqrepro/experiments/instruments/capture"
	"pqrepro/experiments/instruments/rederive"
	"pqrepro/internal/repro"
)

// committedTransferRun is the newest committed quick run of Study B whose
// transfer captures are in its folder, or "" when there is none.
func committedTransferRun(t *testing.T) string {
	t.Helper()
	runs, _ := filepath.Glob("../../../data/net/*-quick/" + netdata.TransferInprocFile)
	slices.Sort(runs)
	for _, in := range slices.Backward(runs) {
		dir := filepath.Dir(in)
		if m, _ := filepath.Glob(filepath.Join(dir, "captures", "*B-*.pcapng.gz")); len(m) > 0 {
			return dir
		}
	}
	return ""
}

// committedTransfer is committedTransferRun and its transfer.csv.gz; the
// test is skipped when there is none.
func committedTransfer(t *testing.T) (dir string, recorded []byte) {
	t.Helper()
	if dir = committedTransferRun(t); dir == "" {
		t.Skip("no committed quick run of Study B holds its transfer captures")
	}
	recorded, err := os.ReadFile(filepath.Join(dir, netdata.TransferFile))
	if err != nil {
		t.Fatal(err)
	}
	return dir, recorded
}

// transferCaptures reads a run's transfer series' captures (checked
// against meta.json), by series.
func transferCaptures(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	mb, err := os.ReadFile(filepath.Join(dir, netdata.MetaFile))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Files map[string]string `json:"files"`
	}
	if err := json.Unmarshal(mb, &m); err != nil {
		t.Fatal(err)
	}
	in, err := os.ReadFile(filepath.Join(dir, netdata.TransferInprocFile))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := netdata.ReadInproc(in, netdata.TransferInprocFile)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, r := range rows {
		if out[r.Series] != nil {
			continue
		}
		name := netdata.CaptureName(r.Series)
		rc, err := rederive.OpenFile(filepath.Join(dir, name+rederive.GzipExt), m.Files[name])
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(rc)
		if cerr := rc.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			t.Fatal(err)
		}
		out[r.Series] = b
	}
	return out
}

// deriveTransfer derives a run's transfer.csv.gz from the captures given
// by series.
func deriveTransfer(t *testing.T, dir string, caps map[string][]byte) []byte {
	t.Helper()
	var metaCaps []rederive.Capture
	for s := range caps {
		metaCaps = append(metaCaps, rederive.Capture{Name: TrimmedName(s)})
	}
	read := func(name string) ([]byte, error) { return os.ReadFile(filepath.Join(dir, name)) }
	open := func(c rederive.Capture) (io.ReadCloser, error) {
		s := strings.TrimSuffix(strings.TrimPrefix(c.Name, "trimmed/"), rederive.CaptureExt)
		return io.NopCloser(bytes.NewReader(caps[s])), nil
	}
	b, err := DeriveTransfer(context.Background(), dir, read, open, metaCaps)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The committed quick run's transfer captures, trimmed, give its
// transfer.csv.gz byte for byte: every column the analysis reads (TTLB,
// from the SYN, round trips, stalls, the handshake, packets and bytes).
// It also measures what trimming saves.
func TestTrimmedTransferRecords(t *testing.T) {
	dir, recorded := committedTransfer(t)
	full := transferCaptures(t, dir)
	trimmed := map[string][]byte{}
	var in, out, gzIn, gzOut int64
	for s, b := range full {
		var w bytes.Buffer
		if _, err := capture.Trim(&w, bytes.NewReader(b)); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		trimmed[s] = w.Bytes()
		in, out = in+int64(len(b)), out+int64(w.Len())
		gzIn, gzOut = gzIn+gzLen(t, b), gzOut+gzLen(t, w.Bytes())
	}
	if got := deriveTransfer(t, dir, full); !bytes.Equal(got, recorded) {
		t.Fatalf("%s: the untrimmed captures do not give the recorded %s: %v", dir, netdata.TransferFile, rederive.Compare(netdata.TransferFile, recorded, got))
	}
	if got := deriveTransfer(t, dir, trimmed); !bytes.Equal(got, recorded) {
		t.Errorf("%s: the trimmed captures give another %s: %v", dir, netdata.TransferFile, rederive.Compare(netdata.TransferFile, recorded, got))
	}
	t.Logf("%s: %d transfer captures, %d -> %d bytes (gzip'd %d -> %d)", filepath.Base(dir), len(full), in, out, gzIn, gzOut)
}

// gzLen is the size of b gzip'd as a run commits it (rederive.Gzip).
func gzLen(t *testing.T, b []byte) int64 {
	t.Helper()
	var w bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&w, gzip.BestCompression)
	zw.Header = gzip.Header{OS: 255}
	zw.Write(b)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return int64(w.Len())
}

// withoutFirstPackets drops the first n Enhanced Packet Blocks of a
// little-endian pcapng capture (as the live capture writes it).
func withoutFirstPackets(t *testing.T, b []byte, n int) []byte {
	t.Helper()
	var out []byte
	for off := 0; off < len(b); {
		typ, l := binary.LittleEndian.Uint32(b[off:]), int(binary.LittleEndian.Uint32(b[off+4:]))
		if typ == 6 && n > 0 {
			n--
		} else {
			out = append(out, b[off:off+l]...)
		}
		off += l
	}
	return out
}

// A capture that lost a connection's handshake never gives that
// connection a time to last byte: dropping a trimmed capture's first
// packets, every row either keeps its time to last byte or has none and
// says why.
func TestTrimmedWithoutHandshake(t *testing.T) {
	dir := committedTransferRun(t)
	if dir == "" {
		t.Skip("no committed quick run of Study B holds its transfer captures")
	}
	full := transferCaptures(t, dir)
	// The first series with a response: a size-0 series (the block's
	// handshake-only connection) has no time to last byte to lose.
	var series string
	for s := range full {
		if strings.Contains(s, "-0B-") || strings.HasSuffix(s, "-0B") {
			continue
		}
		if series == "" || s < series {
			series = s
		}
	}
	in, err := os.ReadFile(filepath.Join(dir, netdata.TransferInprocFile))
	if err != nil {
		t.Fatal(err)
	}
	all, err := netdata.ReadInproc(in, netdata.TransferInprocFile)
	if err != nil {
		t.Fatal(err)
	}
	var rows []netdata.Row
	for _, r := range all {
		if r.Series == series {
			rows = append(rows, r)
		}
	}
	one, err := netdata.EncodeInproc(rows)
	if err != nil {
		t.Fatal(err)
	}
	var w bytes.Buffer
	if _, err := capture.Trim(&w, bytes.NewReader(full[series])); err != nil {
		t.Fatal(err)
	}
	derive := func(c []byte) []netdata.Row {
		b, _, err := DeriveRows(context.Background(), one, 10*time.Second, func(string) (io.ReadCloser, error) {
			return io.NopCloser(bytes.NewReader(c)), nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return readTransfer(t, b)
	}
	base := derive(w.Bytes())
	if len(base) != len(rows) {
		t.Fatalf("%d transfer rows from %d attempts", len(base), len(rows))
	}
	// The series' warm-up connections come first (of the controlled block:
	// two per arm, a whole response each), so the drops reach past them
	// into the recorded connections' handshakes.
	const maxDrop = 600
	incomplete := 0
	reasons := map[string]int{}
	for n := 1; n <= maxDrop; n++ {
		for i, r := range derive(withoutFirstPackets(t, w.Bytes(), n)) {
			b := base[i]
			switch {
			case r.Xfer.TTLBNs == nil && r.Xfer.Incomplete == "":
				t.Errorf("%d packets dropped, row %d: no time to last byte and no reason", n, i)
			case r.Xfer.TTLBNs != nil && (b.Xfer.TTLBNs == nil || *r.Xfer.TTLBNs != *b.Xfer.TTLBNs):
				t.Errorf("%d packets dropped, row %d: time to last byte %d, with the whole capture %v", n, i, *r.Xfer.TTLBNs, fmtPtr(b.Xfer.TTLBNs))
			case r.Xfer.TTLBNs == nil && b.Xfer.TTLBNs != nil:
				incomplete++
				reasons[r.Xfer.Incomplete]++
			}
		}
	}
	t.Logf("rows made incomplete by dropping 1 to %d packets, by reason: %v", maxDrop, reasons)
	if incomplete == 0 {
		t.Errorf("dropping up to %d packets of %s made no row incomplete: the test does not reach a handshake", maxDrop, series)
	}
}

// readTransfer decodes a transfer.csv.gz of one series and returns its
// transfer rows.
func readTransfer(t *testing.T, b []byte) []netdata.Row {
	t.Helper()
	rows, err := netdata.ReadRecords(bytes.NewReader(b), netdata.TransferFile)
	if err != nil {
		t.Fatal(err)
	}
	var out []netdata.Row
	for _, r := range rows {
		if r.Xfer != nil {
			out = append(out, r)
		}
	}
	return out
}

func fmtPtr(p *int64) string {
	if p == nil {
		return "none"
	}
	return fmt.Sprint(*p)
}

// The trimmed captures, kept in either form a run commits them in (gzip'd,
// as runs before the column codec did, or in columns), read back through
// rederive.OpenFile as the records stage reads them, give the committed
// quick run's transfer.csv.gz byte for byte.
func TestTrimmedTransferKeptForms(t *testing.T) {
	dir, recorded := committedTransfer(t)
	tmp := t.TempDir()
	sums := map[string]string{}
	var metaCaps []rederive.Capture
	for s, b := range transferCaptures(t, dir) {
		var w bytes.Buffer
		if _, err := capture.Trim(&w, bytes.NewReader(b)); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		p := filepath.Join(tmp, s+rederive.CaptureExt)
		if err := os.WriteFile(p, w.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		sums[s] = repro.HashBytes(w.Bytes())
		metaCaps = append(metaCaps, rederive.Capture{Name: TrimmedName(s), SHA256: sums[s]})
	}
	read := func(name string) ([]byte, error) { return os.ReadFile(filepath.Join(dir, name)) }
	for _, form := range []struct {
		ext  string
		keep func(src, dst string) (string, error)
	}{{rederive.GzipExt, rederive.Gzip}, {rederive.ColumnsExt, rederive.Columns}} {
		var size int64
		for s := range sums {
			p := filepath.Join(tmp, s+rederive.CaptureExt)
			if _, err := form.keep(p, p+form.ext); err != nil {
				t.Fatal(err)
			}
			fi, _ := os.Stat(p + form.ext)
			size += fi.Size()
		}
		open := func(c rederive.Capture) (io.ReadCloser, error) {
			s := strings.TrimSuffix(strings.TrimPrefix(c.Name, "trimmed/"), rederive.CaptureExt)
			return rederive.OpenFile(filepath.Join(tmp, s+rederive.CaptureExt+form.ext), c.SHA256)
		}
		got, err := DeriveTransfer(context.Background(), dir, read, open, metaCaps)
		if err != nil {
			t.Fatalf("%s: %v", form.ext, err)
		}
		if !bytes.Equal(got, recorded) {
			t.Errorf("%s: the trimmed captures kept as %s give another %s: %v", dir, form.ext, netdata.TransferFile, rederive.Compare(netdata.TransferFile, recorded, got))
		}
		t.Logf("%s: %d trimmed transfer captures kept as %s: %d bytes", filepath.Base(dir), len(sums), form.ext, size)
	}
}
