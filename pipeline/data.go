package pipeline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"pqrepro/internal/remote"
	"pqrepro/internal/repro"
)

func (c *Config) dataOptions() remote.Options {
	return remote.Options{Logf: c.printf, Verbose: c.Verbose}
}

// DataPull fetches every blob the runs under data/ refer to and the store
// lacks from the data remote, checking each SHA-256 before storing it. An
// interrupted pull resumes where it stopped.
func DataPull(ctx context.Context, cfg Config) error {
	// It writes into the content store that build and verify read: under
	// the tree's write lock, waiting for a command that holds it.
	return Locked(ctx, cfg, "data:pull", func(ctx context.Context, cfg Config) error {
		return dataTransfer(ctx, cfg, "pull", remote.Pull)
	})
}

// DataPush uploads every blob the runs under data/ refer to and the data
// remote lacks, re-hashing each one first.
func DataPush(ctx context.Context, cfg Config) error {
	// Under the write lock, so that a run committing new blobs or a pull
	// adopting one is not half seen.
	return Locked(ctx, cfg, "data:push", func(ctx context.Context, cfg Config) error {
		return dataTransfer(ctx, cfg, "push", remote.Push)
	})
}

type transferFunc func(context.Context, *repro.Store, remote.Remote, []string, remote.Options) ([]remote.Result, error)

func dataTransfer(ctx context.Context, cfg Config, verb string, do transferFunc) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	refs, err := remote.Referenced(cfg.Root)
	if err != nil {
		return fmt.Errorf("data:%s: %w", verb, err)
	}
	rem, err := openRemote(cfg)
	if err != nil {
		return fmt.Errorf("data:%s: %w", verb, err)
	}
	store := cfg.store()
	cfg.printf("data:%s: %d referenced blobs, store %s, remote %s", verb, len(refs), store.Dir, rem)
	start := time.Now()
	o := cfg.dataOptions()
	o.Sizes = remote.Sizes(refs) // the bounds a pull never reads past
	res, err := do(ctx, store, rem, remote.Sums(refs), o)
	by := map[string][]string{}
	for _, r := range refs {
		by[r.Sum] = r.By
	}
	var moved, failed int
	var bytes int64
	var errs []error
	notFound := false
	skipped := map[string]int{}
	for _, r := range res {
		switch {
		case r.Err != nil:
			failed++
			errs = append(errs, fmt.Errorf("%s (%s): %w", r.Sum[:12], strings.Join(by[r.Sum], ", "), r.Err))
			notFound = notFound || errors.Is(r.Err, remote.ErrNotFound)
		case r.Skipped != "":
			skipped[r.Skipped]++
		default:
			moved++
			bytes += r.Bytes
		}
	}
	cfg.printf("data:%s: %d transferred (%.1f MB in %v), %d already local, %d already on the remote, %d not in the local store, %d failed",
		verb, moved, float64(bytes)/1e6, time.Since(start).Round(time.Millisecond),
		skipped["present"], skipped["on remote"], skipped["not in the local store"], failed)
	if n := skipped["remote abandoned"]; n > 0 {
		cfg.printf("data:%s: %d not tried: the remote was abandoned (see above)", verb, n)
	}
	if notFound {
		errs = append(errs, errors.New("a blob that is not on the remote must be pushed from the machine that has it (mage data:push there), or its run redone (mage <study>:run)"))
	}
	switch {
	case len(errs) == 0 && err != nil: // cancelled before any blob failed, or refused before any request
		errs = append(errs, err)
	case err != nil:
		// What is about the remote as a whole (abandoned, out of time),
		// not already a blob's error: said once.
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				if !slices.ContainsFunc(res, func(r remote.Result) bool { return r.Err == e }) {
					errs = append(errs, e)
				}
			}
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("data:%s: %w", verb, errors.Join(errs...))
	}
	return nil
}

// DataStatus says where each blob the runs under data/ refer to is.
//
// A blob is present in the local store, remote-only (mage data:pull
// fetches it) or absent. A missing or unreachable remote is not an
// error: the blobs it would be asked about are reported absent or
// unknown with the reason in remoteErr.
func DataStatus(ctx context.Context, cfg Config) (sts []remote.BlobStatus, remoteName string, remoteErr error, err error) {
	refs, err := remote.Referenced(cfg.Root)
	if err != nil {
		return nil, "", nil, err
	}
	rem, remoteErr := openRemote(cfg)
	if remoteErr == nil {
		remoteName = rem.String()
	}
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	return remote.Survey(ctx, cfg.store(), rem, refs), remoteName, remoteErr, nil
}

// printDataStatus is the data part of mage status. It prints one summary line,
// a line per blob that is remote-only or absent (every blob with -v), and for
// blobs the remote could not be asked about a line per cause.
func printDataStatus(ctx context.Context, cfg Config) {
	sts, name, remErr, err := DataStatus(ctx, cfg)
	if err != nil {
		cfg.printf("data   error: %v", err)
		return
	}
	switch {
	case remErr != nil && errors.Is(remErr, os.ErrNotExist) && cfg.settings().Remote == "":
		name = "none configured (" + remote.ConfigFile + ")"
	case remErr != nil:
		name = "error: " + remErr.Error()
	}
	absent := ""
	for _, s := range sts {
		if errors.Is(s.Err, remote.ErrRemoteAbsent) {
			absent = s.Err.Error()
			break
		}
	}
	if absent != "" { // a fresh clone without the share: say so once, not per blob
		cfg.printf("data   %s [remote folder absent: name a real one in %s]", remote.Summary(sts), remote.ConfigFile)
		cfg.printf("  %s", absent)
	} else {
		cfg.printf("data   %s [remote: %s]", remote.Summary(sts), name)
	}
	for _, s := range sts {
		if s.State == remote.Present && !cfg.Verbose {
			continue
		}
		if s.State == remote.Unknown && !cfg.Verbose {
			continue // a remote that cannot be asked fails alike for every blob: said below, once per cause
		}
		line := fmt.Sprintf("  %-11s %s", s.State, s.Sum[:12])
		if s.Size >= 0 {
			line += fmt.Sprintf(" %9.1f MB", float64(s.Size)/1e6)
		}
		line += "  " + s.By[0]
		if len(s.By) > 1 {
			line += fmt.Sprintf(" (+%d more)", len(s.By)-1)
		}
		cfg.printf("%s", line)
	}
	seen := map[string]int{} // an unreachable remote fails every lookup alike: say it once
	var order []string
	for _, s := range sts {
		if s.Err != nil && absent == "" {
			if seen[s.Err.Error()] == 0 {
				order = append(order, s.Err.Error())
			}
			seen[s.Err.Error()]++
		}
	}
	for _, e := range order {
		if seen[e] > 1 {
			cfg.printf("  unknown (%d blobs): %s", seen[e], e)
		} else {
			cfg.printf("  unknown: %s", e)
		}
	}
	if n := countState(sts, remote.RemoteOnly); n > 0 {
		cfg.printf("  %d blobs are on the remote only: `mage data:pull` fetches them", n)
	}
}

func countState(sts []remote.BlobStatus, st remote.State) int {
	n := 0
	for _, s := range sts {
		if s.State == st {
			n++
		}
	}
	return n
}
