package main

import (
	"io"
	"os"

	"pqrepro/experiments/instruments/sshhost"
	"pqrepro/experiments/tls/tlsrun"
)

func init() {
	register("remote", "a role on a study's remote host, started over SSH (serve, clock; experiments/instruments/sshhost)", runRemote)
}

func runRemote(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		io.WriteString(stderr, "usage: pqrepro remote serve|clock [flags]\n")
		return 2
	}
	return sshhost.RunRole(args[0], args[1:], tlsrun.RemoteStacks, os.Stdin, stdout, stderr)
}
