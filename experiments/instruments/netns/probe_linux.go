package netns

import (
	"context"
	"fmt"
	"net"
	"time"
)

// Probe waits until a TCP connection dialled on client reaches a listener
// that server opens on ip.
//
// A bridge's ports, or a container's veth, take a moment to forward after
// they come up. It waits at most within. use, when not nil, sees the
// first connection before it is closed (to read its socket options).
func Probe(ctx context.Context, client, server *Thread, ip string, within time.Duration, use func(net.Conn) error) error {
	var ln net.Listener
	var err error
	server.Do(func() { ln, err = net.Listen("tcp", net.JoinHostPort(ip, "0")) })
	if err != nil {
		return fmt.Errorf("probe listener: %w", err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	deadline := time.Now().Add(within)
	for {
		var c net.Conn
		client.Do(func() {
			d := net.Dialer{Timeout: 500 * time.Millisecond}
			c, err = d.DialContext(ctx, "tcp", ln.Addr().String())
		})
		if err == nil {
			if use != nil {
				err = use(c)
			}
			c.Close()
			return err
		}
		if ctx.Err() != nil || time.Now().After(deadline) {
			return fmt.Errorf("%s is not reachable from the client's namespace within %s: %w", ln.Addr(), within, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
