// Package dockernet runs Study A's docker path: a private Docker daemon,
// an image made locally from the openssl program, and two containers on a
// Compose bridge network, as the original study ran its client and server.
//
// STUB: the API only; the implementation replaces this file.
package dockernet

import (
	"context"
	"errors"
	"io"

	"pqrepro/experiments/instruments/netns"
	"pqrepro/internal/deps"
)

// CertMount is where the server container sees Options.CertDir.
const CertMount = "/certs"

// Options configure Start.
type Options struct {
	Prefix   string
	Root     string
	Program  string
	CertDir  string
	MTU      int
	Offloads bool
	Log      io.Writer
	Verbose  bool
}

// Info is what meta.json records about the docker path.
type Info struct {
	DaemonVersion     string
	DaemonStarted     bool
	Image             string
	ImageFiles        []string
	ComposeSHA256     string
	Compose           string
	Network           string
	Bridge            string
	MTU               int
	Offloads          any
	CongestionControl map[string]string
	ClientAddr        string
	ServerAddr        string
	ClientIface       string
	ClientContainer   string
	ServerContainer   string
}

// Net is a running docker path.
type Net struct {
	Info           Info
	Client, Server *netns.Thread
	done           chan struct{}
}

var errStub = errors.New("the docker path is not implemented yet")

// Available says why this host cannot run the docker path, nil when it can.
func Available() error { return errStub }

// Requirements are the Debian packages the docker path needs.
func Requirements() []deps.Requirement { return nil }

// Start brings the docker path up.
func Start(ctx context.Context, o Options) (*Net, error) { return nil, errStub }

// ServerArgv runs the openssl program with args in the server container.
func (n *Net) ServerArgv(args []string) []string { return nil }

// Done is closed when the path fails during the run.
func (n *Net) Done() <-chan struct{} { return n.done }

// Err says why Done was closed.
func (n *Net) Err() error { return nil }

// Close removes everything Start made.
func (n *Net) Close() error { return nil }

// Leftovers lists what a killed run with prefix left.
func Leftovers(prefix string) ([]string, error) { return nil, nil }

// Clean removes Leftovers.
func Clean(ctx context.Context, prefix string, log io.Writer) ([]string, error) { return nil, nil }
