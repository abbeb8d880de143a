package linkemu

import (
	"context"
	"net"
	"testing"
	"time"
)

func TestSmoke(t *testing.T) {
	sc := Symmetric("smoke", Direction{Delay: 10 * time.Millisecond, Rate: Unlimited}, 1)
	l, err := Start(context.Background(), sc)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	t.Logf("%+v %+v", l.Endpoint(A), l.Endpoint(B))
	var srv *net.UDPConn
	if err := l.RunIn(B, func() (err error) {
		srv, err = net.ListenUDP("udp4", &net.UDPAddr{IP: l.Endpoint(B).Addr.AsSlice(), Port: 9000})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	go func() {
		buf := make([]byte, 2000)
		for {
			n, a, err := srv.ReadFromUDP(buf)
			if err != nil {
				return
			}
			srv.WriteToUDP(buf[:n], a)
		}
	}()
	var c *net.UDPConn
	if err := l.RunIn(A, func() (err error) {
		c, err = net.DialUDP("udp4", nil, &net.UDPAddr{IP: l.Endpoint(B).Addr.AsSlice(), Port: 9000})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 100)
	for i := 0; i < 5; i++ {
		t0 := time.Now()
		c.Write([]byte("hello"))
		c.SetReadDeadline(time.Now().Add(time.Second))
		if _, err := c.Read(buf); err != nil {
			t.Fatal(err)
		}
		t.Log(time.Since(t0))
	}
	t.Logf("%+v", l.Stats())
}

func TestSmokeSelfTest(t *testing.T) {
	for _, sc := range []Scenario{
		Symmetric("st", Direction{Delay: 25 * time.Millisecond, Jitter: 2 * time.Millisecond, Loss: 1, Rate: 10e6, Queue: 64000}, 1),
		Symmetric("st0", Direction{Rate: Unlimited}, 1),
	} {
		rep, err := SelfTest(context.Background(), sc)
		rep.Stats = Stats{}
		t.Logf("%+v %v", rep, err)
	}
}
