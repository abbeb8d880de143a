package tlsdata

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"pqrepro/internal/tcpstack"
)

// TCPStack reads a Study A run's measured.tcp_stack from its meta.json
// (name names it in errors).
//
// Keys are "<path>/client" and "<path>/server" (experiments/tls/tlsrun:
// where each path's clients and servers run; a path whose servers share
// the clients' namespace or run on another host has only a client). Each
// stack is checked by tcpstack.FromMeta; a run recorded before runs
// recorded the stack gives nil.
func TCPStack(name string, b []byte) (map[string]tcpstack.Stack, error) {
	st, err := tcpstack.FromMeta(name, b)
	if err != nil {
		return nil, err
	}
	for _, k := range slices.Sorted(maps.Keys(st)) {
		path, side, ok := strings.Cut(k, "/")
		if !ok || path == "" || (side != "client" && side != "server") {
			return nil, fmt.Errorf("%s: measured.tcp_stack[%q]: want \"<path>/client\" or \"<path>/server\"", name, k)
		}
	}
	return st, nil
}
