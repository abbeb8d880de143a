// Command pause is the docker path's idle process (experiments/tls/dockernet),
// built statically (CGO_ENABLED=0) into the image; dockernet embeds this
// file. It imports the standard library only.
//
// Without arguments it is both containers' main process: it keeps the
// container, and so its network namespace, alive while using no CPU. As a
// container's PID 1 it gets no default signal handlers from the kernel,
// so it exits on SIGTERM and SIGINT itself (docker stop, docker rm -f).
//
// With "-guard program args..." it runs program as its child, hands its
// own standard input to it, and kills it when that input ends. dockernet's
// ServerArgv starts s_server this way: a process started by `docker exec
// -i` outlives the docker CLI that started it (the daemon only closes its
// standard input), and s_server does not read its input while it waits
// for a connection, so without the guard every s_server the caller
// stopped would stay in the container, holding its port.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
)

func main() {
	if len(os.Args) > 2 && os.Args[1] == "-guard" {
		os.Exit(guard(os.Args[2], os.Args[3:]))
	}
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGTERM, syscall.SIGINT)
	<-ch
}

// guard runs prog and returns its exit code; 128+9 when it was killed
// because the input ended.
func guard(prog string, args []string) int {
	cmd := exec.Command(prog, args...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, "pause -guard:", err)
		return 127
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "pause -guard:", err)
		return 127
	}
	go func() {
		io.Copy(in, os.Stdin)
		cmd.Process.Kill()
	}()
	err = cmd.Wait()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee) && ee.ExitCode() >= 0:
		return ee.ExitCode()
	case errors.As(err, &ee):
		return 128 + 9
	}
	return 1
}
