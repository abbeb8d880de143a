package picoboard

import "pqrepro/experiments/instruments/runlife"

// FindRoot walks up from dir to the directory whose go.mod declares module
// pqrepro. That is, the firmware sources, the emulator runner and the
// .cache build cache are found relative to it. It is runlife.FindRoot, the
// rule every runner uses for an empty root.
func FindRoot(dir string) (string, error) { return runlife.FindRoot(dir) }
