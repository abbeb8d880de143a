package pipeline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"pqrepro/experiments/net/linkemu"
	"pqrepro/experiments/tls/dockernet"
	"pqrepro/experiments/tls/tlsrun"
	"pqrepro/internal/remote"
	"pqrepro/internal/treelock"
)

// Clean removes build caches and the leftovers of interrupted runs: what
// a killed run's docker path left (its private dockerd, containers,
// networks, images, bridge, data root and temp dir: dockernet.Clean;
// first, since the data root is under .cache/), Study A's PEM folders of
// killed runs in the temporary directory (tlsrun.RemoveCertLeftovers), .cache/ (but its locks
// and the compiled magefile), staging folders of interrupted stages and incomplete run
// folders under data/, and the data remote's leftovers of killed pushes
// (a dir remote's .incoming-* files no upload holds). It keeps raw data, the content store and the
// committed outputs (they are artifacts; delete pqrepro.lock to force a
// full rebuild).
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
	for _, prefix := range dockerPrefixes() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		gone, err := dockernet.Clean(ctx, prefix, nil)
		cancel()
		for _, g := range gone {
			removed = append(removed, "docker: "+g)
		}
		if err != nil {
			return fmt.Errorf("clean: %w", err)
		}
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
			if keep[m] {
				continue
			}
			if err := remove(m); err != nil {
				return err
			}
		}
	}
	gone, err := tlsrun.RemoveCertLeftovers()
	removed = append(removed, gone...)
	if err != nil {
		return fmt.Errorf("clean: %w", err)
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

// NetClean removes the network namespaces (and with them the TUN, veth
// and bridge devices) that crashed runs of the studies' experiments left
// behind (Study.NetnsPrefixes); those of running processes are kept.
func NetClean(ctx context.Context, cfg Config) error {
	for _, prefix := range netnsPrefixes() {
		if err := netClean(cfg, prefix); err != nil {
			return err
		}
	}
	return nil
}

// netnsPrefixes name the network namespaces the studies' experiments
// create.
func netnsPrefixes() []string {
	var out []string
	for _, s := range Studies() {
		out = append(out, s.NetnsPrefixes...)
	}
	return out
}

func netClean(cfg Config, prefix string) error {
	rep, err := linkemu.Clean("", prefix, false)
	if err != nil {
		return fmt.Errorf("net:clean: %w", err)
	}
	switch {
	case len(rep.Removed) == 0 && len(rep.InUse) == 0:
		cfg.printf("net:clean: no namespace named %s* left behind", prefix)
	default:
		if len(rep.Removed) > 0 {
			cfg.printf("net:clean: removed %s", strings.Join(rep.Removed, ", "))
		}
		if len(rep.InUse) > 0 {
			cfg.printf("net:clean: kept %s (their process is still running)", strings.Join(rep.InUse, ", "))
		}
	}
	return nil
}
