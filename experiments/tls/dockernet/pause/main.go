// Command pause is the docker path's idle process: the main process of
// both containers (experiments/tls/dockernet), which keeps each
// container, and so its network namespace, alive while using no CPU. As
// a container's PID 1 it gets no default signal handlers from the kernel,
// so it exits on SIGTERM and SIGINT itself (docker stop, docker rm -f).
//
// It is built statically (CGO_ENABLED=0) into the image by dockernet,
// which embeds this file; it imports the standard library only.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGTERM, syscall.SIGINT)
	<-ch
}
