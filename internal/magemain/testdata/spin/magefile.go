//go:build mage

// A magefile for internal/magemain's tests: Spin takes the tree's write
// lock (the tree is this directory), says so, and computes until its
// context is cancelled, the way a long target does.
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"pqrepro/internal/interrupt"
	"pqrepro/internal/treelock"
)

// Spin holds the write lock and computes until interrupted, then removes
// its marker file (its cleanup) and releases the lock.
func Spin(ctx context.Context) error {
	ctx, stop := interrupt.Target(ctx)
	defer stop()
	l, err := treelock.Acquire(ctx, ".", treelock.Write, "spin", treelock.Refuse, nil)
	if err != nil {
		return err
	}
	defer l.Release()
	marker := filepath.Join(".cache", "spinning")
	if err := os.WriteFile(marker, []byte(fmt.Sprint(os.Getpid())), 0o644); err != nil {
		return err
	}
	fmt.Println("spinning", os.Getpid())
	x := 0
	for ctx.Err() == nil {
		for i := range 1 << 20 {
			x += i
		}
	}
	os.Remove(marker)
	fmt.Println("stopped", x > 0)
	return ctx.Err()
}
