package tlsdata

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
