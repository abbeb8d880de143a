package picoboard

import (
	"fmt"
	"os"
	"path/filepath"

	"pqrepro/experiments/instruments/runlife"
)

// FindRoot walks up from dir to the directory whose go.mod declares module
// pqrepro: the firmware sources, the emulator runner and the .cache build
// cache are found relative to it. It is runlife.FindRoot, the rule every
// runner uses for an empty root.
func FindRoot(dir string) (string, error) { return runlife.FindRoot(dir) }

// writeFileAtomic writes via a temporary file and rename, so a reader never
// sees half a file.
func writeFileAtomic(path string, data []byte, perm os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(path), err)
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Chmod(perm); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
