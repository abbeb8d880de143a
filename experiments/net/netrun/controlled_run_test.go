package netrun

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"pqrepro/datasets/netdata"
	"pqrepro/experiments/instruments/rederive"
	"pqrepro/experiments/net/netjoin"
	"pqrepro/internal/provenance"
	"pqrepro/internal/repro"
)

// TestRunControlledBlock records a run with the controlled transfer block
// (issue 41) into a temporary tree: size 0 and 20,000 bytes, the groups
// interleaved, CUBIC and BBR set per socket. Each connection's cc is what
// its socket read back (getsockopt TCP_CONGESTION, in its namespace); the
// positions give each series' order, pairs holding both groups; size 0
// has a handshake time and no time to last byte; the rounds' records keep
// their header; the transfer records re-derive from the captures.
func TestRunControlledBlock(t *testing.T) {
	needRoot(t)
	avail, err := os.ReadFile("/proc/sys/net/ipv4/tcp_available_congestion_control")
	if err != nil || !slices.Contains(strings.Fields(string(avail)), "cubic") || !slices.Contains(strings.Fields(string(avail)), "bbr") {
		t.Skipf("skipped: the kernel lacks cubic or bbr (%q, %v)", avail, err)
	}
	spec := strings.Replace(tinySpec(0, "5000", "[3]"), "[runs]", `toolchains = ["go1.27.3"]
transfer_sizes = [0, 20000]
transfer_round = 4
transfer_order = "interleaved"
transfer_cc = ["cubic", "bbr"]
[runs]`, 1)
	cfg, log := tree(t, spec)
	copyEndpoint(t, cfg.Root)
	buildOrSkip(t, cfg.Root, "go1.27.3")
	dir := runOnce(t, cfg, log)
	// Every round row is go1.27.3's, so records.csv.gz keeps the
	// header of the runs before the toolchain column.
	if h := readRows(t, filepath.Join(dir, netdata.RecordsFile))[0]; !slices.Equal(h, netdata.ColumnsV1) {
		t.Errorf("records.csv.gz header %v, want the rounds' own", h)
	}
	recs := transferRows(t, dir)
	if len(recs) != 2*2*2*4 {
		t.Fatalf("%d transfer records, want %d", len(recs), 2*2*2*4)
	}
	bySeries := map[string][]netdata.Row{}
	for _, r := range recs {
		if !r.Controlled || !r.OK || r.Cap == nil || r.Cap.ThsNs == nil {
			t.Errorf("%s: row %+v, want a controlled, complete handshake", r.Series, r)
		}
		if want := strings.Split(r.Series, "-")[2]; r.CC != want {
			t.Errorf("%s: cc %q read back, want %q", r.Series, r.CC, want)
		}
		switch r.ResponseBytes {
		case 0:
			if r.Xfer != nil || r.ClientTTLBNs != 0 {
				t.Errorf("%s: size 0 with a transfer %+v, ttlb %d", r.Series, r.Xfer, r.ClientTTLBNs)
			}
		case 20000:
			if r.Xfer == nil || r.Xfer.TTLBNs == nil {
				t.Errorf("%s: no time to last byte: %+v", r.Series, r.Xfer)
				break
			}
			// The mechanism's W and A (analysis/ttlb/mechanism.txt): the
			// response starts with at least one segment in flight, and
			// the client has acknowledged at least the server's first
			// flight (ServerHello .. Finished, over a kilobyte).
			if x := r.Xfer; x.RespWindow < 1 || x.HsAckedSegs < 1 {
				t.Errorf("%s: resp_window %d, hs_acked_segs %d; want both >= 1", r.Series, x.RespWindow, x.HsAckedSegs)
			}
			t.Logf("%s %s: W %d, A %d segments", r.Series, r.Group, r.Xfer.RespWindow, r.Xfer.HsAckedSegs)
		default:
			t.Errorf("%s: response_bytes %d", r.Series, r.ResponseBytes)
		}
		bySeries[r.Series] = append(bySeries[r.Series], r)
	}
	if len(bySeries) != 4 {
		t.Errorf("series %v, want 2 sizes x 2 congestion controls", len(bySeries))
	}
	for id, rows := range bySeries {
		slices.SortFunc(rows, func(a, b netdata.Row) int { return a.Position - b.Position })
		for k, r := range rows {
			if r.Position != k || r.Seq != k/2 {
				t.Errorf("%s: position %d seq %d at place %d", id, r.Position, r.Seq, k)
			}
			if k%2 == 1 && r.Group == rows[k-1].Group {
				t.Errorf("%s: pair %d is %s twice: the groups are not interleaved", id, k/2, r.Group)
			}
		}
	}
	m, err := provenance.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	tm, _ := json.Marshal(m.Measured["transfer"])
	if !strings.Contains(string(tm), `"congestion_control":["cubic","bbr"]`) || !strings.Contains(string(tm), `"order":"interleaved"`) {
		t.Errorf("meta measured.transfer = %s", tm)
	}
	// The transfer records follow from transfer-inproc.csv.gz and the
	// captures committed with the run, through netjoin.
	got, _, err := netjoin.DeriveRows(context.Background(), mustRead(t, filepath.Join(dir, netdata.TransferInprocFile)), 5*time.Second, func(series string) (io.ReadCloser, error) {
		b, err := os.ReadFile(filepath.Join(dir, netdata.CaptureName(series)+".gz"))
		if err != nil {
			return nil, err
		}
		zr, err := gzip.NewReader(bytes.NewReader(b))
		return io.NopCloser(zr), err
	})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, mustRead(t, filepath.Join(dir, netdata.TransferFile))) {
		t.Error("transfer.csv.gz does not re-derive from its captures")
	}
	// The trimmed transfer captures (issue 41) are committed with the
	// run, named in meta.json, and give the same transfer records.
	if !strings.Contains(string(tm), `"trimmed_captures"`) || !strings.Contains(string(tm), "committed in the run folder") {
		t.Errorf("meta measured.transfer says nothing of the trimmed captures: %s", tm)
	}
	var full, trimmed int64
	got, _, err = netjoin.DeriveRows(context.Background(), mustRead(t, filepath.Join(dir, netdata.TransferInprocFile)), 5*time.Second, func(series string) (io.ReadCloser, error) {
		if m.Files[netjoin.TrimmedName(series)] == "" {
			t.Errorf("meta.json does not name %s", netjoin.TrimmedName(series))
		}
		if fi, err := os.Stat(filepath.Join(dir, netdata.CaptureName(series)+rederive.GzipExt)); err == nil {
			full += fi.Size()
		}
		if fi, err := os.Stat(filepath.Join(dir, netjoin.TrimmedName(series)+rederive.ColumnsExt)); err == nil {
			trimmed += fi.Size()
		}
		return rederive.OpenFile(filepath.Join(dir, netjoin.TrimmedName(series)+rederive.ColumnsExt), m.Files[netjoin.TrimmedName(series)])
	})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, mustRead(t, filepath.Join(dir, netdata.TransferFile))) {
		t.Error("transfer.csv.gz does not re-derive from its trimmed captures")
	}
	if trimmed == 0 || trimmed >= full {
		t.Errorf("trimmed captures %d bytes in columns, full ones %d gzip'd", trimmed, full)
	}
	t.Logf("transfer captures gzip'd: %d bytes, trimmed in columns %d", full, trimmed)
	// The build's records stage, as Study B registers it, re-derives
	// transfer.csv.gz from the trimmed captures, the full ones absent.
	for series := range bySeries {
		if err := os.Remove(filepath.Join(dir, netdata.CaptureName(series)+".gz")); err != nil {
			t.Fatal(err)
		}
	}
	rel, _ := filepath.Rel(cfg.Root, dir)
	var notes bytes.Buffer
	st := rederive.Stage(rederive.Spec{Name: "net:records-test", RunDir: filepath.ToSlash(rel), Out: "results/records/net-test.csv.gz",
		Derive: netjoin.Derive, Also: []rederive.Also{{File: netdata.TransferFile, What: "trimmed transfer captures", Of: netjoin.IsTrimmed, Derive: netjoin.DeriveTransfer}}})
	e := &repro.Engine{Root: cfg.Root, CodeRoot: filepath.Join("..", "..", ".."), Stages: []*repro.Stage{st}, Log: io.Discard, Notices: &notes}
	if _, err := e.Build(context.Background()); err != nil {
		t.Fatalf("records stage: %v", err)
	}
	if !strings.Contains(notes.String(), "transfer.csv.gz re-derived from 4 trimmed transfer captures") {
		t.Errorf("records stage notices:\n%s", notes.String())
	}
}

// transferRows reads a recorded run's transfer.csv.gz, each row with its
// series from transfer-inproc.csv.gz.
func transferRows(t *testing.T, dir string) []netdata.Row {
	t.Helper()
	in, err := netdata.ReadInproc(mustRead(t, filepath.Join(dir, netdata.TransferInprocFile)), netdata.TransferInprocFile)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, netdata.TransferFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := netdata.ReadRecords(f, netdata.TransferFile)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != len(in) {
		t.Fatalf("%d transfer records, %d inproc rows", len(recs), len(in))
	}
	for i := range recs {
		recs[i].Series = in[i].Series
	}
	return recs
}
