package pipeline

import (
	"context"
	"fmt"
	"strings"

	"pqrepro/experiments/bridgenet"
	"pqrepro/experiments/linkemu"
	"pqrepro/experiments/openssl"
	"pqrepro/experiments/sshhost"
	"pqrepro/experiments/tlsmatrix"
	"pqrepro/internal/deps"
)

// Requirements shared by targets. Each names the Debian packages that
// provide it; `mage all` and `mage test` install what is missing.
var (
	reqTshark = deps.Requirement{Name: "tshark", Why: "the capture cross-check test (Wireshark's decoder vs ours)",
		Present: deps.Command("tshark"), Apt: []string{"tshark"}}
	reqArmGCC = deps.Requirement{Name: "arm-none-eabi-gcc with newlib", Why: "the RP2040 firmware (pico:build)",
		Present: func() bool { return deps.Command("arm-none-eabi-gcc")() && newlibPresent() },
		Apt:     []string{"gcc-arm-none-eabi", "libnewlib-arm-none-eabi"}}
	reqNode = deps.Requirement{Name: "node and npm", Why: "the rp2040js emulator and the PQClean sources (npm packages)",
		Present: func() bool { return deps.Command("node")() && deps.Command("npm")() }, Apt: []string{"nodejs", "npm"}}
	reqLatex = deps.Requirement{Name: "pdflatex", Why: "the paper (paper stage)",
		Present: deps.Command("pdflatex"),
		Apt:     []string{"texlive-latex-base", "texlive-latex-recommended", "texlive-fonts-recommended", "lmodern"}}
	reqDpkgDev = deps.Requirement{Name: "dpkg-source", Why: "unpacking the pinned mbedTLS source package (apt-get source)",
		Present: deps.Command("dpkg-source"), Apt: []string{"dpkg-dev"}}
	reqTcpdump = deps.Requirement{Name: "tcpdump", Why: "the snap-length capture test (tcpdump -s 128 read by our reader)",
		Present: deps.Command("tcpdump"), Apt: []string{"tcpdump"}}
)

func init() {
	testRequirements = func(root string) []deps.Requirement {
		reqs := append([]deps.Requirement{reqTshark, reqArmGCC, reqNode, reqLatex, reqDpkgDev, reqTcpdump}, openssl.Requirements()...)
		return append(append(reqs, bridgenet.Requirements()...), sshhost.TestRequirements()...) // the bridge path's and the remote host's tests (openssh-server)
	}
}

// NetClean removes the network namespaces (and with them the TUN, veth
// and bridge devices) that crashed link-emulator runs and Study A bridge
// runs (tlsmatrix.NetnsPrefix) left behind; those of running processes
// are kept.
func NetClean(ctx context.Context, cfg Config) error {
	for _, prefix := range netnsPrefixes {
		if err := netClean(cfg, prefix); err != nil {
			return err
		}
	}
	return nil
}

// netnsPrefixes name the network namespaces the runners create: the link
// emulator's (Study B) and the bridge path's (Study A).
var netnsPrefixes = []string{linkemu.DefaultPrefix, tlsmatrix.NetnsPrefix}

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
