package bridgenet

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// testPrefix names everything the tests create, so that a leftover is
// recognisable and nothing of another user is touched.
const testPrefix = "pqbt"

func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: creates network namespaces, a bridge and veth pairs")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("needs iproute2's ip: apt-get install iproute2")
	}
}

// leftovers lists the namespaces this process created that still exist.
func leftovers(t *testing.T, names []string) []string {
	t.Helper()
	var out []string
	for _, n := range names {
		if _, err := os.Stat(NetnsDir + "/" + n); err == nil {
			out = append(out, n)
		}
	}
	return out
}

func TestStartClose(t *testing.T) {
	needRoot(t)
	for _, tc := range []struct {
		name     string
		offloads bool
	}{{"offloads-off", false}, {"offloads-default", true}} {
		t.Run(tc.name, func(t *testing.T) {
			n, err := Start(context.Background(), Options{Prefix: testPrefix, Offloads: tc.offloads})
			if err != nil {
				t.Fatal(err)
			}
			names := n.Names()
			if n.Info.MTU != 1500 {
				t.Errorf("MTU %d, want 1500", n.Info.MTU)
			}
			if len(n.Info.Offloads) != 4 {
				t.Errorf("offloads of %d devices, want 4: %v", len(n.Info.Offloads), n.Info.Offloads)
			}
			for dev, o := range n.Info.Offloads {
				if !tc.offloads && (o.TSO || o.GSO || o.GRO) {
					t.Errorf("%s: offloads %+v, want all off", dev, o)
				}
				if tc.offloads && !(o.TSO && o.GSO) {
					t.Errorf("%s: offloads %+v, want the kernel's default TSO and GSO on", dev, o)
				}
			}
			if !n.Info.TCPNoDelay {
				t.Error("TCP_NODELAY read as off; Go sets it on every TCP connection")
			}
			if cc := n.Info.CongestionControl["c"]; cc == "" {
				t.Errorf("no congestion control read: %v", n.Info.CongestionControl)
			}
			if err := n.Err(); err != nil {
				t.Errorf("Err on an intact network: %v", err)
			}
			if err := n.Close(); err != nil {
				t.Fatal(err)
			}
			if err := n.Close(); err != nil {
				t.Fatalf("second Close: %v", err)
			}
			if l := leftovers(t, names); len(l) > 0 {
				t.Fatalf("namespaces left after Close: %v", l)
			}
		})
	}
}

// A Start cancelled while it builds the network (a Ctrl-C early in a
// run) returns an error and leaves no namespace behind (it used to
// dereference the nil result it was returning).
func TestStartCancelled(t *testing.T) {
	needRoot(t)
	for _, after := range []time.Duration{0, 20 * time.Millisecond, 60 * time.Millisecond} {
		ctx, cancel := context.WithTimeout(context.Background(), after)
		before := seq.Load()
		n, err := Start(ctx, Options{Prefix: testPrefix})
		cancel()
		if err == nil {
			n.Close() // fast enough to finish: nothing to check
			continue
		}
		if n != nil {
			t.Errorf("cancelled after %v: a network with the error %v", after, err)
		}
		base := testPrefix + strconv.Itoa(os.Getpid()) + "-" + strconv.FormatInt(before+1, 10) + "-"
		if l := leftovers(t, []string{base + "c", base + "b", base + "s"}); len(l) > 0 {
			t.Errorf("cancelled after %v: namespaces left: %v", after, l)
		}
	}
}

func TestBadOptions(t *testing.T) {
	for _, o := range []Options{{Prefix: "far-too-long-prefix"}, {MTU: 100}, {Prefix: "a b"}} {
		if _, err := Start(context.Background(), o); err == nil {
			t.Errorf("Start(%+v) succeeded, want an error", o)
		}
	}
}

// TestRemoved deletes a part of the network from outside (as another
// process would) and checks that the watcher reports it and Close still
// removes everything.
func TestRemoved(t *testing.T) {
	needRoot(t)
	for _, what := range []string{"bridge", "netns"} {
		t.Run(what, func(t *testing.T) {
			n, err := Start(context.Background(), Options{Prefix: testPrefix, Poll: 10 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			names := n.Names()
			defer n.Close()
			switch what {
			case "bridge":
				err = ip("-n", names[1], "link", "del", testPrefix+"-br0")
			case "netns":
				err = ip("netns", "del", names[2])
			}
			if err != nil {
				t.Fatal(err)
			}
			select {
			case <-n.Done():
			case <-time.After(10 * time.Second):
				t.Fatal("the watcher did not notice the removal")
			}
			if err := n.Err(); !errors.Is(err, ErrRemoved) {
				t.Fatalf("Err = %v, want ErrRemoved", err)
			}
			if err := n.Close(); err != nil {
				t.Fatal(err)
			}
			if l := leftovers(t, names); len(l) > 0 {
				t.Fatalf("namespaces left after Close: %v", l)
			}
			out, _ := exec.Command("ip", "-o", "link").Output()
			if strings.Contains(string(out), testPrefix+"-") {
				t.Fatalf("devices named %s-* left in the host namespace:\n%s", testPrefix, out)
			}
		})
	}
}
