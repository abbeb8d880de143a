package pipeline

import (
	"pqrepro/internal/deps"
)

// Requirements shared by targets. Each names the Debian packages that
// provide it; `mage all` and `mage test` install what is missing.
var (
	reqTshark = deps.Requirement{Name: "tshark", Why: "the capture cross-check test (Wireshark's decoder vs ours)",
		Present: deps.Command("tshark"), Apt: []string{"tshark"}}
	reqLatex = deps.Requirement{Name: "pdflatex", Why: "the paper (paper stage)",
		Present: func() bool { return deps.Command("pdflatex")() && deps.Command("pdftotext")() },
		Apt:     []string{"texlive-latex-base", "texlive-latex-recommended", "texlive-fonts-recommended", "lmodern", "poppler-utils"}}
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
