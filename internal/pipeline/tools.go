package pipeline

import (
	"context"

	"pqrepro/internal/provenance"
)

// toolVersions runs each version command and keeps the first line of
// what it prints; a tool that is missing is left out.
func toolVersions(ctx context.Context, cmds map[string][]string) map[string]string {
	out := map[string]string{}
	for name, argv := range cmds {
		if v, err := provenance.ToolVersion(ctx, argv...); err == nil {
			out[name] = v
		}
	}
	return out
}
