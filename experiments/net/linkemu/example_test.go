package linkemu_test

import (
	"context"
	"fmt"
	"net"
	"time"

	"pqrepro/experiments/net/linkemu"
)

// A 25 ms each-way link with 1 % loss at 10 Mbit/s: self-test it, then
// listen in namespace B and dial from namespace A. Needs root (not run by
// go test).
func ExampleStartVerified() {
	sc := linkemu.Symmetric("wan", linkemu.Direction{
		Delay: 25 * time.Millisecond, Jitter: 2 * time.Millisecond,
		Loss: 1, Rate: 10_000_000, Queue: 64_000,
	}, 42)
	l, rep, err := linkemu.StartVerified(context.Background(), sc, linkemu.Options{}, linkemu.SelfTestConfig{})
	if err != nil {
		fmt.Println(err) // *linkemu.AccuracyError when the link is off
		return
	}
	defer l.Close()
	fmt.Printf("rtt p50 %.1f ms\n", rep.P50Ms)

	var ln net.Listener
	l.RunIn(linkemu.B, func() (err error) {
		ln, err = net.Listen("tcp", net.JoinHostPort(l.Endpoint(linkemu.B).Addr.String(), "4433"))
		return err
	})
	defer ln.Close()
	var conn net.Conn
	l.RunIn(linkemu.A, func() (err error) {
		conn, err = net.Dial("tcp", ln.Addr().String())
		return err
	})
	defer conn.Close()
	select {
	case <-l.Done(): // the forwarder died or the context ended
		fmt.Println(l.Err())
	default:
	}
}
