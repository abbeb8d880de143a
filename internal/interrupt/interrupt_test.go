package interrupt

import (
	"context"
	"syscall"
	"testing"
	"time"
)

func TestContextCancelsOnSIGTERM(t *testing.T) {
	ctx, stop := Context(context.Background())
	defer stop()
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("SIGTERM did not cancel the context")
	}
}

func TestStopCancels(t *testing.T) {
	ctx, stop := Context(context.Background())
	stop()
	if ctx.Err() == nil {
		t.Error("stop did not cancel the context")
	}
}

func TestTargetStopCancels(t *testing.T) {
	ctx, stop := Target(context.Background())
	stop()
	if ctx.Err() == nil {
		t.Error("stop did not cancel the context")
	}
}
