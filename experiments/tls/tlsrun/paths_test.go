package tlsrun

import (
	"strings"
	"testing"
)

// TestPathTypes: each path type has its name, runs the openssl-cli
// stack exactly where cellSupported says it can, and is watched for a
// break exactly when it can break mid-run (a namespace, a container, an
// SSH session). A path type that lost a method of an optional interface
// would otherwise change the run silently: no watch, or "cannot run".
func TestPathTypes(t *testing.T) {
	for _, tc := range []struct {
		p                     path
		name                  string
		watched, meta, cliRun bool
	}{
		{p: &loopbackPath{}, name: PathLoopback, cliRun: true},
		{p: &bridgePath{}, name: PathBridge, watched: true, cliRun: true},
		{p: &dockerPath{}, name: PathDocker, watched: true, cliRun: true},
		{p: &remotePath{}, name: PathRemote, watched: true, meta: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.p.name(); got != tc.name {
				t.Errorf("name %q, want %q", got, tc.name)
			}
			_, cli := tc.p.(cliPath)
			if supported := cellSupported(StackOpenSSLCLI, tc.name) == nil; cli != supported || cli != tc.cliRun {
				t.Errorf("cliPath %v, cellSupported says %v, want %v", cli, supported, tc.cliRun)
			}
			if _, ok := tc.p.(watchedPath); ok != tc.watched {
				t.Errorf("watchedPath %v, want %v", ok, tc.watched)
			}
			if _, ok := tc.p.(metaPath); ok != tc.meta {
				t.Errorf("metaPath %v, want %v", ok, tc.meta)
			}
		})
	}
}

// TestRunnerPath: the runner finds a started path by name, "" as
// loopback, and nil for a path the run has not started.
func TestRunnerPath(t *testing.T) {
	lo, br := &loopbackPath{}, &bridgePath{}
	r := &runner{paths: []path{lo, br}}
	for _, tc := range []struct {
		name string
		want path
	}{
		{"", lo}, {PathLoopback, lo}, {PathBridge, br}, {PathDocker, nil}, {"nowhere", nil},
	} {
		if got := r.path(tc.name); got != tc.want {
			t.Errorf("path(%q) = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// fakePath is a path that records when it is closed.
type fakePath struct {
	loopbackPath
	n      string
	closed *[]string
}

func (f *fakePath) name() string { return f.n }
func (f *fakePath) close()       { *f.closed = append(*f.closed, f.n) }

// TestClosePathsReverse: the paths close in the reverse of the order
// they started (the remote server before the containers before the
// namespaces), as the deferred closes of each did.
func TestClosePathsReverse(t *testing.T) {
	var closed []string
	r := &runner{}
	for _, n := range []string{PathLoopback, PathBridge, PathDocker, PathRemote} {
		r.paths = append(r.paths, &fakePath{n: n, closed: &closed})
	}
	r.closePaths()
	if got, want := strings.Join(closed, " "), "remote docker bridge loopback"; got != want {
		t.Errorf("closed %s, want %s", got, want)
	}
}
