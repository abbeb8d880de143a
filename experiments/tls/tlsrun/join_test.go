package tlsrun

import (
	"crypto/tls"
	"strconv"
	"strings"
	"testing"
	"time"

	"pqrepro/experiments/instruments/capture"
	"pqrepro/experiments/instruments/handshake"
)

// joinFixture is a runner with two configurations on two server ports and
// no real sockets: enough for join.
func joinFixture() *runner {
	r := &runner{configs: []Config{
		{Name: "ed25519/X25519", Key: handshake.Ed25519, Group: tls.X25519, GroupName: "X25519"},
		{Name: "ed25519/MLKEM1024", Key: handshake.Ed25519, Group: tls.MLKEM1024, GroupName: "MLKEM1024"},
	}}
	r.servers = []*server{{addr: "127.0.0.1:4001"}, {addr: "127.0.0.1:4002"}}
	return r
}

var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// mkConn is a connection the process made: config c, client port, dial at
// t0+at, lasting dur.
func mkConn(seq, c, port int, at, dur time.Duration) conn {
	return conn{
		seq: seq, step: Step{Config: c, Index: seq},
		client: handshake.ClientRecord{
			Local: "127.0.0.1:" + strconv.Itoa(port), Server: "127.0.0.1:400" + strconv.Itoa(c+1),
			Start: t0.Add(at), DurationNs: int64(dur),
		},
		server: handshake.ServerRecord{DurationNs: int64(dur) - 100_000},
	}
}

// mkCap is the capture's record of a complete connection whose SYN is at
// t0+syn.
func mkCap(client, server, group string, syn time.Duration) capture.Record {
	s := t0.Add(syn).UnixNano()
	ch, sh, cf, fin := s+50_000, s+300_000, s+700_000, s+800_000
	ths := cf - ch
	return capture.Record{
		Client: client, Server: server, SynNs: &s, ClientHelloNs: &ch, ServerHelloNs: &sh, ServerFlightEndNs: &sh,
		ClientFinishedNs: &cf, FinNs: &fin, Group: group, ThsNs: &ths, Complete: true,
		PacketsC2S: 6, PacketsS2C: 6, FrameBytesC2S: 900, FrameBytesS2C: 2000, TCPPayloadBytesC2S: 500, TCPPayloadBytesS2C: 1600,
	}
}

func TestJoinReusedTuple(t *testing.T) {
	r := joinFixture()
	// The same 4-tuple three times within milliseconds, and a foreign
	// connection on lo that the run ignores.
	conns := []conn{
		mkConn(0, 0, 50000, 0, time.Millisecond),
		mkConn(1, 1, 50001, 2*time.Millisecond, time.Millisecond),
		mkConn(2, 0, 50000, 4*time.Millisecond, time.Millisecond),
		mkConn(3, 0, 50000, 5100*time.Microsecond, time.Millisecond),
	}
	conns[1].step.Warmup = true
	caps := []capture.Record{
		mkCap("127.0.0.1:50000", "127.0.0.1:4001", "X25519", 5200*time.Microsecond),
		mkCap("127.0.0.1:50000", "127.0.0.1:4001", "X25519", 10*time.Microsecond),
		mkCap("127.0.0.1:50001", "127.0.0.1:4002", "MLKEM1024", 2010*time.Microsecond),
		mkCap("127.0.0.1:50000", "127.0.0.1:4001", "X25519", 4010*time.Microsecond),
		mkCap("127.0.0.1:60000", "127.0.0.1:5432", "X25519", 4020*time.Microsecond),
	}
	recs, js, err := r.join(conns, caps)
	if err != nil {
		t.Fatal(err)
	}
	wantSyn := []time.Duration{10 * time.Microsecond, 2010 * time.Microsecond, 4010 * time.Microsecond, 5200 * time.Microsecond}
	for i, rec := range recs {
		if rec.Seq != i || *rec.SynNs != t0.Add(wantSyn[i]).UnixNano() {
			t.Errorf("record %d: seq %d syn %d, want the capture record with SYN at +%s", i, rec.Seq, *rec.SynNs, wantSyn[i])
		}
		if err := rec.Check(); err != nil {
			t.Errorf("record %d: %v", i, err)
		}
		if *rec.InprocClientNs != int64(time.Millisecond) || rec.NegotiatedGroup != rec.Group {
			t.Errorf("record %d: %+v", i, rec)
		}
	}
	if !recs[1].Warmup || recs[0].Warmup || js.Measured != 3 {
		t.Errorf("warm-up flags wrong: %v %v, measured %d", recs[0].Warmup, recs[1].Warmup, js.Measured)
	}
}

func TestJoinSlack(t *testing.T) {
	// A SYN stamped 2 ms before the dial (a clock step) is still found
	// when it is the only candidate.
	r := joinFixture()
	conns := []conn{mkConn(0, 0, 50000, 10*time.Millisecond, time.Millisecond)}
	caps := []capture.Record{mkCap("127.0.0.1:50000", "127.0.0.1:4001", "X25519", 8*time.Millisecond)}
	if _, _, err := r.join(conns, caps); err != nil {
		t.Fatal(err)
	}
}

func TestJoinFailures(t *testing.T) {
	good := func() ([]conn, []capture.Record) {
		return []conn{mkConn(0, 0, 50000, 0, time.Millisecond), mkConn(1, 1, 50001, 2*time.Millisecond, time.Millisecond)},
			[]capture.Record{
				mkCap("127.0.0.1:50000", "127.0.0.1:4001", "X25519", 10*time.Microsecond),
				mkCap("127.0.0.1:50001", "127.0.0.1:4002", "MLKEM1024", 2010*time.Microsecond),
			}
	}
	for _, tc := range []struct {
		name   string
		modify func([]conn, []capture.Record) ([]conn, []capture.Record)
		want   string
	}{
		{"missing from capture", func(c []conn, k []capture.Record) ([]conn, []capture.Record) { return c, k[:1] },
			"seq 1 (ed25519/MLKEM1024, 127.0.0.1:50001 -> 127.0.0.1:4002): not in the capture"},
		{"SYN outside the window", func(c []conn, k []capture.Record) ([]conn, []capture.Record) {
			k[1] = mkCap("127.0.0.1:50001", "127.0.0.1:4002", "MLKEM1024", 900*time.Millisecond)
			return c, k
		}, "not in the capture (1 capture records with this 4-tuple"},
		{"stray connection", func(c []conn, k []capture.Record) ([]conn, []capture.Record) {
			return c, append(k, mkCap("127.0.0.1:50999", "127.0.0.1:4002", "MLKEM1024", 3*time.Millisecond))
		}, "1 connections to the run's servers that the run did not make (first: 127.0.0.1:50999 -> 127.0.0.1:4002)"},
		{"ambiguous", func(c []conn, k []capture.Record) ([]conn, []capture.Record) {
			return c, append(k, mkCap("127.0.0.1:50001", "127.0.0.1:4002", "MLKEM1024", 2020*time.Microsecond))
		}, "2 capture records match"},
		{"wrong group", func(c []conn, k []capture.Record) ([]conn, []capture.Record) {
			k[1].Group = "X25519MLKEM768"
			return c, k
		}, `negotiated "X25519MLKEM768", configured MLKEM1024`},
		{"incomplete", func(c []conn, k []capture.Record) ([]conn, []capture.Record) {
			k[0].Complete, k[0].ClientFinishedNs, k[0].ThsNs = false, nil, nil
			return c, k
		}, "incomplete"},
		{"HRR", func(c []conn, k []capture.Record) ([]conn, []capture.Record) {
			k[0].HRR = true
			return c, k
		}, "HelloRetryRequest"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, k := tc.modify(good())
			_, _, err := joinFixture().join(c, k)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
	c, k := good()
	if _, _, err := joinFixture().join(c, k); err != nil {
		t.Fatalf("the unmodified fixture fails: %v", err)
	}
}

func TestJoinErrorIsShort(t *testing.T) {
	var conns []conn
	for i := 0; i < 50; i++ {
		conns = append(conns, mkConn(i, 0, 50000+i, time.Duration(i)*time.Millisecond, time.Millisecond))
	}
	_, _, err := joinFixture().join(conns, nil)
	if err == nil || !strings.Contains(err.Error(), "on 50 connections") || !strings.Contains(err.Error(), "and 40 more") {
		t.Fatalf("err = %v", err)
	}
}
