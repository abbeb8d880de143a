package capture

import (
	"context"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestFilterKernelAccepts attaches the programs to a UDP socket (no root
// needed): the kernel's classic BPF checker must accept them for both link
// types, with and without the outgoing drop, up to MaxPorts ports.
func TestFilterKernelAccepts(t *testing.T) {
	many := make([]uint16, MaxPorts)
	for i := range many {
		many[i] = uint16(1 + i)
	}
	for _, lt := range []uint32{LinkEthernet, LinkRaw} {
		for _, drop := range []bool{false, true} {
			for _, ports := range [][]uint16{{443}, many} {
				prog, err := filterProgram(lt, drop, ports, 262144)
				if err != nil {
					t.Fatal(err)
				}
				fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
				if err != nil {
					t.Fatal(err)
				}
				err = attachFilter(fd, prog)
				unix.Close(fd)
				if err != nil {
					t.Errorf("link %d, drop %v, %d ports: the kernel refuses the program: %v", lt, drop, len(ports), err)
				}
			}
		}
	}
}

// echoServer accepts connections on network/addr and echoes them until
// the test ends; it returns the listener's port.
func echoServer(t *testing.T, network, addr string) (uint16, error) {
	ln, err := net.Listen(network, addr)
	if err != nil {
		return 0, err
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); io.Copy(c, c) }()
		}
	}()
	return uint16(ln.Addr().(*net.TCPAddr).Port), nil
}

// exchange connects to addr, sends a message, reads the echo and closes.
func exchange(network, addr string) error {
	c, err := net.DialTimeout(network, addr, 5*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	msg := []byte("port filter test " + addr)
	if _, err := c.Write(msg); err != nil {
		return err
	}
	_, err = io.ReadFull(c, make([]byte, len(msg)))
	return err
}

// noise makes echo exchanges with addr, one after another, until the
// returned stop is called (or 10 s pass), and stop returns how many
// succeeded.
func noise(addr string) (stop func() int) {
	quit, done := make(chan struct{}), make(chan struct{})
	n := 0
	go func() {
		defer close(done)
		end := time.Now().Add(10 * time.Second) // bounded even if the test hangs
		for time.Now().Before(end) {
			select {
			case <-quit:
				return
			default:
			}
			if exchange("tcp4", addr) == nil {
				n++
			}
		}
	}()
	var once sync.Once
	return func() int { once.Do(func() { close(quit); <-done }); return n }
}

// TestLivePortFilterOnLo captures on lo with Ports set while other TCP and
// UDP traffic runs on lo: only the listed ports' segments are in the file,
// IPv4 and IPv6, each once (the loopback duplicate drop still works).
func TestLivePortFilterOnLo(t *testing.T) {
	needRoot(t)
	in4, err := echoServer(t, "tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	out4, err := echoServer(t, "tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	in6, err6 := echoServer(t, "tcp6", "[::1]:0")
	if err6 != nil {
		t.Logf("no IPv6 on lo (%v): checking IPv4 only", err6)
	}
	// A UDP datagram to the listed port number must not pass either.
	udp, err := net.ListenPacket("udp4", fmt.Sprintf("127.0.0.1:%d", in4))
	if err != nil {
		t.Fatal(err)
	}
	defer udp.Close()

	ports := []uint16{in4}
	if err6 == nil {
		ports = append(ports, in6)
	}
	// Traffic on the other port runs all along, also while Start sets the
	// socket up: no packet of it may slip in before the filter is on.
	stopNoise := noise(fmt.Sprintf("127.0.0.1:%d", out4))
	defer stopNoise()
	time.Sleep(20 * time.Millisecond)
	path := filepath.Join(t.TempDir(), "filtered.pcapng")
	c, err := Start(context.Background(), Options{Interface: "lo", Path: path, Ports: ports})
	if err != nil {
		t.Fatal(err)
	}
	traffic := []struct{ network, addr string }{
		{"tcp4", fmt.Sprintf("127.0.0.1:%d", out4)},
		{"tcp4", fmt.Sprintf("127.0.0.1:%d", in4)},
		{"tcp4", fmt.Sprintf("127.0.0.1:%d", out4)},
	}
	if err6 == nil {
		traffic = append(traffic, struct{ network, addr string }{"tcp6", fmt.Sprintf("[::1]:%d", in6)})
	}
	var runErr error
	for _, tr := range traffic {
		if runErr = exchange(tr.network, tr.addr); runErr != nil {
			break
		}
	}
	if runErr == nil {
		_, runErr = udp.WriteTo([]byte("not tcp"), udp.LocalAddr())
	}
	st, err := c.Stop()
	if n := stopNoise(); n == 0 {
		t.Fatal("no exchange on the other port succeeded: the test proves nothing")
	}
	if runErr != nil {
		t.Fatal(runErr)
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Valid(); err != nil {
		t.Fatal(err)
	}

	lt, pkts := readPackets(t, path)
	if lt != LinkEthernet {
		t.Errorf("lo link type %d, want Ethernet", lt)
	}
	syns := map[uint16]int{}
	per := map[uint16]int{}
	for i, b := range pkts {
		var seg segment
		if res := decode(lt, b, &seg); res != decOK {
			t.Fatalf("packet %d is not a TCP segment (decode result %d): % x", i, res, b)
		}
		sp, dp := seg.src.Port(), seg.dst.Port()
		server := dp
		if sp == in4 || (err6 == nil && sp == in6) {
			server = sp
		}
		if server != in4 && (err6 != nil || server != in6) {
			t.Fatalf("packet %d: ports %d -> %d, neither listed in %v (out-of-filter port %d)", i, sp, dp, ports, out4)
		}
		per[server]++
		if seg.flags&flagSYN != 0 && seg.flags&flagACK == 0 {
			syns[server]++
		}
	}
	for _, p := range ports {
		// SYN, SYN-ACK, ACK, data, echo, FIN/ACK exchange: at least 6.
		if per[p] < 6 || syns[p] != 1 {
			t.Errorf("port %d: %d packets and %d SYNs, want >= 6 and exactly 1 (no loopback duplicates)", p, per[p], syns[p])
		}
	}
}

// TestStopUnderContinuousTraffic: Stop drains what was queued and returns
// even while other loopback traffic never pauses (an unfiltered capture on
// a busy lo), instead of waiting for a quiet 20 ms.
func TestStopUnderContinuousTraffic(t *testing.T) {
	needRoot(t)
	port, err := echoServer(t, "tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	stopNoise := noise(fmt.Sprintf("127.0.0.1:%d", port))
	defer stopNoise()
	path := filepath.Join(t.TempDir(), "busy.pcapng")
	c, err := Start(context.Background(), Options{Interface: "lo", Path: path})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	t0 := time.Now()
	st, err := c.Stop()
	took := time.Since(t0)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Stop took %s, %d packets", took, st.Packets)
	if took > 2*time.Second { // a 20 ms read timeout plus a slow machine's slack
		t.Errorf("Stop took %s under continuous traffic, want it to end at the first packet after the stop", took)
	}
	if st.Packets == 0 {
		t.Error("no packets captured from the continuous traffic")
	}
	readFile(t, path, ReadOptions{}) // complete and undamaged
}
