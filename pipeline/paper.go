package pipeline

import (
	"context"
	"errors"
	"os"
	"path/filepath"
)

// Paper builds paper/main.pdf and everything it depends on.
func Paper(ctx context.Context, cfg Config) error {
	if _, err := os.Stat(filepath.Join(cfg.Root, "paper", "main.tex")); errors.Is(err, os.ErrNotExist) {
		return errors.New("paper/main.tex does not exist yet: the paper sources are not written")
	}
	return Build(ctx, cfg, "paper")
}
