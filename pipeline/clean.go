package pipeline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"pqrepro/internal/remote"
	"pqrepro/internal/repro"
	"pqrepro/internal/treelock"
)

// Clean removes build caches and the leftovers of interrupted runs, in and
// outside the tree. It removes what the studies' killed runs left outside
// the tree that clean removes (Study.Clean: Study A's docker path and PEM
// folders; first, since the docker path's data root is under .cache/),
// .cache/ (but its locks, the compiled magefile and the scratch trees of
// verifies still running), staging folders of interrupted stages and
// incomplete run folders under data/, and the data remote's leftovers of
// killed pushes (a dir remote's .incoming-* files no upload holds). It
// keeps raw data, the content store and the committed outputs (they are
// artifacts; delete pqrepro.lock to force a full rebuild).
func Clean(cfg Config) error {
	var removed []string
	remove := func(p string) error {
		if err := os.RemoveAll(p); err != nil {
			return fmt.Errorf("clean: %w", err)
		}
		rel, _ := filepath.Rel(cfg.Root, p)
		removed = append(removed, rel)
		return nil
	}
	gone, err := cleanStudies(context.Background(), cfg, "clean")
	removed = append(removed, gone...)
	if err != nil {
		return err
	}
	// .cache/locks and .cache/mage stay: the lock this command holds and
	// the compiled magefile it runs (and that another command may be
	// compiling right now).
	keep := map[string]bool{filepath.Join(cfg.Root, treelock.Dir): true, filepath.Join(cfg.Root, ".cache", "mage"): true}
	patterns := []string{".cache/*", ".stage-*", "data/*/.incomplete-*"}
	for _, pat := range patterns {
		matches, err := filepath.Glob(filepath.Join(cfg.Root, pat))
		if err != nil {
			return err
		}
		for _, m := range matches {
			if keep[m] || liveVerifyTree(m) {
				continue
			}
			if err := remove(m); err != nil {
				return err
			}
		}
	}
	if lr, name := leftoverRemover(cfg); lr != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		gone, err := lr.RemoveLeftovers(ctx)
		cancel()
		for _, g := range gone {
			removed = append(removed, name+": "+g)
		}
		if err != nil && !errors.Is(err, remote.ErrRemoteAbsent) {
			return fmt.Errorf("clean: %w", err)
		}
	}
	if len(removed) == 0 {
		cfg.printf("clean: nothing to remove")
		return nil
	}
	cfg.printf("clean: removed %s", strings.Join(removed, ", "))
	return nil
}

// liveVerifyTree reports whether p is the scratch tree of a verify still
// running (repro.VerifyTreeOwner). Verify takes no lock, so clean may
// run beside it, and must leave its tree alone.
func liveVerifyTree(p string) bool {
	pid := repro.VerifyTreeOwner(p)
	return pid != 0 && treelock.ProcessAlive(pid)
}

// NetClean removes the network namespaces that crashed runs of the
// studies' experiments left behind, and with them the TUN, veth and bridge
// devices. It is Study.Clean for net:clean; those of running processes are
// kept, and each study says which it removed and kept.
func NetClean(ctx context.Context, cfg Config) error {
	_, err := cleanStudies(ctx, cfg, "net:clean")
	return err
}

// cleanStudies calls every registered study's Clean for target and
// returns what they removed; the first error stops it.
func cleanStudies(ctx context.Context, cfg Config, target string) ([]string, error) {
	var removed []string
	for _, s := range Studies() {
		if s.Clean == nil {
			continue
		}
		gone, err := s.Clean(ctx, cfg, target)
		removed = append(removed, gone...)
		if err != nil {
			return removed, fmt.Errorf("%s: study %s: %w", target, s.Name, err)
		}
	}
	return removed, nil
}
