// Command pqrepro holds the roles of the pipeline that run outside Mage.
// That is, the statistics commands (compare, serial), the capture reader
// (pcap), and the roles that run in another network namespace or host
// (serve, dial, linkemu).
//
// Each subcommand lives in its own file and registers itself in init with
// register, so that parallel work on different subcommands never touches
// the same file.
package main

import (
	"fmt"
	"io"
	"os"
	"sort"
)

// A command is one subcommand of pqrepro. Run gets the arguments after the
// subcommand's name and returns the process exit status: 0 on success,
// 1 when the work failed, 2 for bad usage or bad input.
type command struct {
	summary string
	run     func(args []string, stdout, stderr io.Writer) int
}

var commands = map[string]command{}

// register adds a subcommand; it panics on a duplicate name, which is a
// programming error caught by any test that starts the binary.
func register(name, summary string, run func(args []string, stdout, stderr io.Writer) int) {
	if _, dup := commands[name]; dup {
		panic("pqrepro: duplicate command " + name)
	}
	commands[name] = command{summary: summary, run: run}
}

func main() {
	os.Exit(dispatch(os.Args[1:], os.Stdout, os.Stderr))
}

func dispatch(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stderr)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "pqrepro: unknown command %q; run 'pqrepro help' for the list\n", args[0])
		return 2
	}
	return cmd.run(args[1:], stdout, stderr)
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: pqrepro <command> [arguments]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "commands:")
	names := make([]string, 0, len(commands))
	for name := range commands {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		fmt.Fprintf(w, "  %-10s %s\n", name, commands[name].summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run 'pqrepro <command> -h' for a command's flags.")
}
