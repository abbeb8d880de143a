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
// It checks that the trimmed captures give the transfer rows the full
// ones gave byte for byte; if not, it keeps none and says why in
// measured.transfer, and the run goes on (its records stand on the full
// captures). They are committed gzip'd in the run folder as
// netjoin.TrimmedName plus ".gz" when they fit in the in-repo limit
// (rederive.InRepoLimit(limit), uncompressed) beside the full captures
// committed with the run, if those are; else they go to the content store.
// Either way meta.json names each by the SHA-256 of its uncompressed bytes.
func (r *runner) trimTransfer(ctx context.Context, out *runOutputs, limit int64) error {
	if len(out.xferRows) == 0 {
		return nil
	}
	tm, _ := out.measured["transfer"].(map[string]any)
	paths := map[string]string{}
	defer func() {
		for _, p := range paths {
			os.Remove(p)
		}
	}()
	var total, full int64
	sums := map[string]string{}
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
	}
	recs, _, err := netjoin.DeriveRows(ctx, out.xferInproc, r.plan.Timeout, func(series string) (io.ReadCloser, error) {
		return rederive.OpenFile(paths[series], sums[series])
	})
	if err != nil {
		return fmt.Errorf("net:run: the transfer rows from the trimmed captures: %w", err)
	}
	if err := rederive.Compare(netjoin.TrimmedName("*"), out.xferRecs, recs); err != nil {
		tm["trimmed_error"] = "trimmed captures not kept: " + err.Error()
		fmt.Fprintf(r.cfg.Log, "net:run: WARNING the trimmed transfer captures give other transfer rows; not kept: %v\n", err)
		return nil
	}
	budget := rederive.InRepoLimit(limit)
	if out.capBytes <= budget { // the full captures are committed too (storeCaptures)
		budget -= out.capBytes
	}
	inRepo := total <= budget
	var gzBytes int64
	for _, se := range r.est.Series {
		if !se.Block {
			continue
		}
		name := netjoin.TrimmedName(se.ID)
		out.files[name] = sums[se.ID]
		if !inRepo {
			if _, err := r.cfg.Store.Put(paths[se.ID]); err != nil {
				return fmt.Errorf("net:run: store the trimmed capture of %s: %w", se.ID, err)
			}
			continue
		}
		dst := filepath.Join(r.dir, filepath.FromSlash(name+rederive.GzipExt))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return fmt.Errorf("net:run: %w", err)
		}
		sum, err := rederive.Gzip(paths[se.ID], dst)
		if err != nil {
			return fmt.Errorf("net:run: %w", err)
		}
		out.files[name+rederive.GzipExt] = sum
		if fi, err := os.Stat(dst); err == nil {
			gzBytes += fi.Size()
		}
	}
	where := "committed in the run folder as trimmed/<series>.pcapng.gz"
	if !inRepo {
		where = fmt.Sprintf("in the content store under their SHA-256 (repro.Store): %d bytes exceed what the in-repo limit (%d) leaves, %d", total, rederive.InRepoLimit(limit), max(budget, 0))
	}
	tm["trimmed_captures"] = map[string]any{
		"where":        where,
		"bytes":        total,
		"gzip_bytes":   gzBytes,
		"full_bytes":   full,
		"note":         "the transfer series' captures trimmed by capture.Trim (issue 41): each connection's packets whole to the end of its TLS handshake as the reader parses it, later packets' link, IP and TCP headers only with their original length; the build's net:records stage re-derives " + netdata.TransferFile + " from them; checked equal at record time",
		"derived_rows": "equal to the untrimmed captures' byte for byte",
	}
	fmt.Fprintf(r.cfg.Log, "net:run: trimmed transfer captures: %d bytes of %d (%d gzip'd), %s\n", total, full, gzBytes, where)
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
