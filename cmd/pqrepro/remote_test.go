package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestRemoteServeStacks: `pqrepro remote serve` is given Study A's
// openssl stack (tlsrun.RemoteStacks), so a configuration of it reaches
// that stack, which asks for the harness, and is no unknown stack.
func TestRemoteServeStacks(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := dispatch([]string{"remote", "serve", "-addr", "127.0.0.1", "-configs", `[{"group":"X25519","cert":"ed25519","stack":"openssl"}]`}, &stdout, &stderr)
	if code != 1 || !strings.Contains(stderr.String(), "config 0: the openssl stack needs -harness") {
		t.Errorf("exit %d, stderr %q", code, stderr.String())
	}
}
