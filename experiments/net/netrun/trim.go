package netrun

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"pqrepro/datasets/netdata"
	"pqrepro/experiments/instruments/capture"
	"pqrepro/experiments/instruments/rederive"
	"pqrepro/experiments/net/netjoin"
	"pqrepro/internal/atomicfile"
	"pqrepro/internal/repro"
)

// trimTransfer keeps the transfer block's captures trimmed (issue 41:
// each connection's handshake whole, headers only after it;
// capture.Trim) beside the run's other captures. A clone then holds
// what transfer.csv.gz is derived from even when the full captures are
// in the content store.
//
// They are committed in the run folder as netjoin.TrimmedName plus
// rederive.ColumnsExt (capture.EncodeCapture: lossless columns, about
// two thirds of gzip's size, less for long transfers' header-only
// packets) when those files fit in what the in-repo limit
// (rederive.InRepoLimit(limit)) leaves beside the full captures committed
// with the run, if those are; else they go to the content store
// uncompressed. Unlike the full captures, they are counted at the size
// they are committed at: that is what the columns are for. Either way
// meta.json names each by the SHA-256 of its uncompressed bytes.
//
// It checks that the trimmed captures, read back as they are kept
// (decoded from the committed files, or from the files stored), give the
// transfer rows the full ones gave byte for byte; if not, it keeps none
// and says why in measured.transfer, and the run goes on (its records
// stand on the full captures).
func (r *runner) trimTransfer(ctx context.Context, out *runOutputs, limit int64) error {
	if len(out.xferRows) == 0 {
		return nil
	}
	tm, _ := out.measured["transfer"].(map[string]any)
	paths, cols := map[string]string{}, map[string]string{}
	removeCols := func() { // and the trimmed/ folder, when that leaves it empty
		for _, p := range cols {
			os.Remove(p)
			os.Remove(filepath.Dir(p))
		}
	}
	defer func() {
		for _, p := range paths {
			os.Remove(p)
		}
	}()
	var total, full, colBytes int64
	sums, colSums := map[string]string{}, map[string]string{}
	for _, se := range r.est.Series {
		if !se.Block {
			continue
		}
		p := filepath.Join(r.dir, ".trimmed-"+se.ID+".pcapng")
		paths[se.ID] = p
		st, err := trimFile(out.capPaths[se.ID], out.files[netdata.CaptureName(se.ID)], p)
		if err != nil {
			return fmt.Errorf("net:run: trim the capture of %s: %w", se.ID, err)
		}
		total, full = total+st.Out, full+st.In
		if sums[se.ID], err = repro.HashFile(p); err != nil {
			return fmt.Errorf("net:run: %w", err)
		}
		dst := filepath.Join(r.dir, filepath.FromSlash(netjoin.TrimmedName(se.ID)+rederive.ColumnsExt))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return fmt.Errorf("net:run: %w", err)
		}
		cols[se.ID] = dst
		if colSums[se.ID], err = rederive.Columns(p, dst); err != nil {
			removeCols()
			return fmt.Errorf("net:run: the trimmed capture of %s in columns: %w", se.ID, err)
		}
		if fi, err := os.Stat(dst); err == nil {
			colBytes += fi.Size()
		}
	}
	budget := rederive.InRepoLimit(limit)
	if out.capBytes <= budget { // the full captures are committed too (storeCaptures)
		budget -= out.capBytes
	}
	inRepo := colBytes <= budget
	kept := cols
	if !inRepo {
		removeCols()
		kept = paths
	}
	recs, _, err := netjoin.DeriveRows(ctx, out.xferInproc, r.plan.Timeout, func(series string) (io.ReadCloser, error) {
		return rederive.OpenFile(kept[series], sums[series])
	})
	if err != nil {
		removeCols()
		return fmt.Errorf("net:run: the transfer rows from the trimmed captures: %w", err)
	}
	if err := rederive.Compare(netjoin.TrimmedName("*"), out.xferRecs, recs); err != nil {
		removeCols()
		tm["trimmed_error"] = "trimmed captures not kept: " + err.Error()
		fmt.Fprintf(r.cfg.Log, "net:run: WARNING the trimmed transfer captures give other transfer rows; not kept: %v\n", err)
		return nil
	}
	for _, se := range r.est.Series {
		if !se.Block {
			continue
		}
		name := netjoin.TrimmedName(se.ID)
		out.files[name] = sums[se.ID]
		if inRepo {
			out.files[name+rederive.ColumnsExt] = colSums[se.ID]
		} else if _, err := r.cfg.Store.Put(paths[se.ID]); err != nil {
			return fmt.Errorf("net:run: store the trimmed capture of %s: %w", se.ID, err)
		}
	}
	where := "committed in the run folder as trimmed/<series>.pcapng" + rederive.ColumnsExt + " (capture.EncodeCapture)"
	if !inRepo {
		where = fmt.Sprintf("in the content store under their SHA-256 (repro.Store): %d bytes in columns exceed what the in-repo limit (%d) leaves, %d", colBytes, rederive.InRepoLimit(limit), max(budget, 0))
	}
	tm["trimmed_captures"] = map[string]any{
		"where":         where,
		"bytes":         total,
		"columns_bytes": colBytes,
		"full_bytes":    full,
		"note":          "the transfer series' captures trimmed by capture.Trim (issue 41): each connection's packets whole to the end of its TLS handshake as the reader parses it, later packets' link, IP and TCP headers only with their original length; the build's net:records stage re-derives " + netdata.TransferFile + " from them; checked equal at record time, read back as kept",
		"derived_rows":  "equal to the untrimmed captures' byte for byte",
	}
	fmt.Fprintf(r.cfg.Log, "net:run: trimmed transfer captures: %d bytes of %d (%d in columns), %s\n", total, full, colBytes, where)
	return nil
}

// trimFile trims the capture at src (checked against its SHA-256) into dst.
func trimFile(src, sum, dst string) (capture.TrimStats, error) {
	in, err := rederive.OpenFile(src, sum)
	if err != nil {
		return capture.TrimStats{}, err
	}
	defer in.Close()
	f, err := atomicfile.Create(dst, 0o644)
	if err != nil {
		return capture.TrimStats{}, err
	}
	defer f.Abort()
	bw := bufio.NewWriterSize(f, 1<<20)
	st, err := capture.Trim(bw, in)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = in.Close()
	}
	if err == nil {
		err = f.Commit()
	}
	return st, err
}
