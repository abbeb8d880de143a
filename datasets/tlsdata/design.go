package tlsdata

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Cell is one combination of a run's factors other than the configuration:
// stack x path x key-share mode. It is shared because experiments/tls.toml
// names cells ([paper.cell], [paper.fallback]) that the analysis judges on.
type Cell struct {
	Stack    string `toml:"stack" json:"stack"`
	Path     string `toml:"path" json:"path"`
	KeyShare string `toml:"keyshare" json:"keyshare"`
}

// Key-share modes of a cell: the client's only key share is for the
// configured group, or every handshake takes the HelloRetryRequest path.
const (
	KeyShareDirect = "direct"
	KeyShareHRR    = "hrr"
)

// String is "stack/path/keyshare", e.g. "openssl/bridge/direct".
func (c Cell) String() string { return c.Stack + "/" + c.Path + "/" + c.KeyShare }

// ParseCell parses "stack/path/keyshare", each part one of the known
// values (Cell.Validate).
func ParseCell(s string) (Cell, error) {
	parts := strings.Split(s, "/")
	if len(parts) != 3 {
		return Cell{}, fmt.Errorf("cell %q: want stack/path/keyshare, e.g. openssl/bridge/direct", s)
	}
	c := Cell{Stack: parts[0], Path: parts[1], KeyShare: parts[2]}
	return c, c.Validate()
}

// Validate says which of c's stack, path and key-share mode is not one of
// Stacks, KnownPaths or the two modes, or returns nil.
func (c Cell) Validate() error {
	var errs []string
	if !slices.Contains(Stacks, c.Stack) {
		errs = append(errs, fmt.Sprintf("stack %q is not one of %v", c.Stack, Stacks))
	}
	if !slices.Contains(KnownPaths, c.Path) {
		errs = append(errs, fmt.Sprintf("path %q is not one of %v", c.Path, KnownPaths))
	}
	if c.KeyShare != KeyShareDirect && c.KeyShare != KeyShareHRR {
		errs = append(errs, fmt.Sprintf("key-share mode %q is not %s or %s", c.KeyShare, KeyShareDirect, KeyShareHRR))
	}
	if len(errs) > 0 {
		return fmt.Errorf("cell %s: %s", c, strings.Join(errs, "; "))
	}
	return nil
}

// OrDefault is c with its zero fields filled with the records' defaults:
// Go's stack on loopback, direct.
func (c Cell) OrDefault() Cell {
	return Cell{Stack: cmp.Or(c.Stack, StackGo), Path: cmp.Or(c.Path, DefaultPath), KeyShare: cmp.Or(c.KeyShare, KeyShareDirect)}
}

// CompareCells orders cells as tables list them: by stack, then path,
// then key-share mode, each in the order of its known values. That is,
// go, openssl, openssl-cli; loopback, bridge, remote, docker; direct, hrr.
func CompareCells(a, b Cell) int {
	return cmp.Or(
		cmp.Compare(slices.Index(Stacks, a.Stack), slices.Index(Stacks, b.Stack)),
		cmp.Compare(slices.Index(KnownPaths, a.Path), slices.Index(KnownPaths, b.Path)),
		cmp.Compare(a.KeyShare, b.KeyShare)) // "direct" < "hrr"
}

// CellOf is the cell of a record of configuration c on path: c's stack,
// and the HRR mode when c asks for a retry.
func (c ConfigID) CellOf(path string) Cell {
	ks := KeyShareDirect
	if c.HRR {
		ks = KeyShareHRR
	}
	return Cell{Stack: c.StackName(), Path: path, KeyShare: ks}
}

// Design is the part of Study A's spec the analysis needs, in the records'
// terms. The experiment resolves it from its spec (tlsrun.Spec.Design) and
// the analysis turns it into its parameters, so neither imports the other.
type Design struct {
	// Configs maps each of [[paper.configs]]' names (a role, e.g.
	// "pq-sig") to its config ID, e.g. "mldsa87/X25519".
	Configs map[string]string
	// Cell is the profile's primary cell, its defaults filled in.
	Cell Cell
	// Fallback is [paper.fallback]; the zero Cell means none.
	Fallback Cell
}
