package pipeline

import (
	"context"

	"pqrepro/internal/deps"
	"pqrepro/internal/gotest"
)

// testRequirements are what the test suite needs beyond Go, so that no
// test skips in CI for want of a tool.
var testRequirements = func(root string) []deps.Requirement { return nil }

// Test installs what the tests need, then fuzzes, vets and tests the
// module.
//
// It installs testRequirements, then each study's BeforeTests, runs the
// bounded fuzzers (gotest.Bounded), then go vet and go test over the
// whole module (gotest.VetAndTest), printing package results, failed
// tests in full and every skipped test with its reason, then "N passed, N
// failed, N skipped". Extra arguments are passed to go test.
func Test(ctx context.Context, cfg Config, args ...string) error {
	if err := cfg.installer().Ensure(ctx, testRequirements(cfg.Root)); err != nil {
		return err
	}
	for _, s := range Studies() {
		if s.BeforeTests == nil || !withBeforeTests {
			continue
		}
		if err := s.BeforeTests(ctx, cfg); err != nil {
			return err
		}
	}
	if err := gotest.Bounded(ctx, cfg.Root, cfg.settings().Fuzz, cfg.log()); err != nil {
		return err
	}
	return gotest.VetAndTest(ctx, cfg.Root, cfg.log(), args...)
}

// withBeforeTests is false in tests of Test itself, which fake the tree.
var withBeforeTests = true
