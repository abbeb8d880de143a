package pipeline

import (
	"context"
	"fmt"
	"strings"

	"pqrepro/experiments/net/linkemu"
	"pqrepro/internal/deps"
)

// Requirements shared by targets. Each names the Debian packages that
// provide it; `mage all` and `mage test` install what is missing.
var (
	reqTshark = deps.Requirement{Name: "tshark", Why: "the capture cross-check test (Wireshark's decoder vs ours)",
		Present: deps.Command("tshark"), Apt: []string{"tshark"}}
	reqLatex = deps.Requirement{Name: "pdflatex", Why: "the paper (paper stage)",
		Present: deps.Command("pdflatex"),
		Apt:     []string{"texlive-latex-base", "texlive-latex-recommended", "texlive-fonts-recommended", "lmodern"}}
	reqTcpdump = deps.Requirement{Name: "tcpdump", Why: "the snap-length capture test (tcpdump -s 128 read by our reader)",
		Present: deps.Command("tcpdump"), Apt: []string{"tcpdump"}}
)

func init() {
	testRequirements = func(root string) []deps.Requirement {
		reqs := []deps.Requirement{reqTshark, reqLatex, reqTcpdump}
		for _, s := range Studies() {
			if s.TestRequirements != nil {
				reqs = append(reqs, s.TestRequirements(root)...)
			}
		}
		return reqs
	}
}

// NetClean removes the network namespaces (and with them the TUN, veth
// and bridge devices) that crashed runs of the studies' experiments left
// behind (Study.NetnsPrefixes); those of running processes are kept.
func NetClean(ctx context.Context, cfg Config) error {
	for _, prefix := range netnsPrefixes() {
		if err := netClean(cfg, prefix); err != nil {
			return err
		}
	}
	return nil
}

// netnsPrefixes name the network namespaces the studies' experiments
// create.
func netnsPrefixes() []string {
	var out []string
	for _, s := range Studies() {
		out = append(out, s.NetnsPrefixes...)
	}
	return out
}

func netClean(cfg Config, prefix string) error {
	rep, err := linkemu.Clean("", prefix, false)
	if err != nil {
		return fmt.Errorf("net:clean: %w", err)
	}
	switch {
	case len(rep.Removed) == 0 && len(rep.InUse) == 0:
		cfg.printf("net:clean: no namespace named %s* left behind", prefix)
	default:
		if len(rep.Removed) > 0 {
			cfg.printf("net:clean: removed %s", strings.Join(rep.Removed, ", "))
		}
		if len(rep.InUse) > 0 {
			cfg.printf("net:clean: kept %s (their process is still running)", strings.Join(rep.InUse, ", "))
		}
	}
	return nil
}
