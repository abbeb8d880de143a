package gotest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
)

// VetAndTest runs go vet and go test over the module at root.
//
// It runs `go vet ./...`, then `go test -json -count=1 -p 1 ./...` with
// args before the pattern, in root, writing what Summarize writes to
// log. It fails when vet fails, when a test fails and when no test ran
// at all. -p 1 runs one package at a time: tests that measure
// milliseconds (a link emulator) fail for want of CPU beside tests that
// keep every core busy (an emulator).
func VetAndTest(ctx context.Context, root string, log io.Writer, args ...string) error {
	vet := []string{"go", "vet", "./..."}
	fmt.Fprintf(log, "test: %s\n", strings.Join(vet, " "))
	cmd := exec.CommandContext(ctx, vet[0], vet[1:]...)
	cmd.Dir = root
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w", strings.Join(vet, " "), err)
	}
	argv := append([]string{"go", "test", "-json", "-count=1", "-p", "1"}, append(args, "./...")...)
	fmt.Fprintf(log, "test: %s\n", strings.Join(argv, " "))
	cmd = exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = root
	cmd.Stderr = log
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("%s: %w", strings.Join(argv, " "), err)
	}
	sum, serr := Summarize(out, log)
	werr := cmd.Wait()
	switch {
	case serr != nil:
		return serr
	case werr != nil:
		return fmt.Errorf("go test: %w (%d failed)", werr, sum.Failed)
	case sum.Passed == 0:
		return errors.New("go test ran no test")
	}
	return nil
}
