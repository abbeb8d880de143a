package netrun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"pqrepro/experiments/instruments/handshake"
	"pqrepro/experiments/instruments/sshhost"
)

// RemoteSpec is net.toml's [remote] table: the host of the TLS servers.
// With a host, the servers run there (the deployed pqrepro's serve role, Go
// crypto/tls of this module's toolchain) and each series' namespace B
// relays its connections to them, so a series' bytes cross its emulated
// link, then the real network to the host. Empty: the servers run in
// namespace B, as before.
type RemoteSpec = sshhost.Spec

// remoteServers is a run's servers on the remote host, one per group,
// shared by every series.
type remoteServers struct {
	srv  *sshhost.Servers
	mu   sync.Mutex
	outs map[string]relayed // the relay's outgoing local address -> its connection
}

// relayed is one relayed connection: where its record goes.
type relayed struct {
	log    *serverLog
	client string    // the client's address as the relay accepted it
	accept time.Time // this host's clock, when the relay accepted it
}

// startRemote starts the servers on the spec's remote host (nil without
// one). opt, when set, replaces how the host is reached (tests).
func startRemote(ctx context.Context, sp *Spec, plan Plan, opt *sshhost.Options, root string, log io.Writer) (*remoteServers, error) {
	if sp.Remote.Host == "" {
		return nil, nil
	}
	o := sp.Remote.Options()
	if opt != nil {
		o = *opt
	}
	h, err := sshhost.New(o)
	if err != nil {
		return nil, err
	}
	var cs []sshhost.ServerConfig
	for _, g := range plan.Groups {
		cs = append(cs, sshhost.ServerConfig{Group: g.String(), Cert: string(plan.CertKey), Chain: sp.CertChain, Seed: sp.Seeds.Certificates})
	}
	srv, err := sshhost.StartServers(ctx, h, root, "", cs)
	if err != nil {
		return nil, fmt.Errorf("remote host: %w", err)
	}
	rs := &remoteServers{srv: srv, outs: map[string]relayed{}}
	go rs.dispatch()
	fmt.Fprintf(log, "net:run: remote host %s (%s, %s, %s): servers %v, pid %d, clock offset %+.3f ms +- %.3f ms, ready in %s\n",
		h.Dest(), srv.Prov.Hostname, srv.Prov.Kernel, srv.Prov.OS, srv.Addrs, srv.Proc.PID,
		float64(srv.Prov.Clock.OffsetNs)/1e6, float64(srv.Prov.Clock.BoundNs)/1e6, srv.Ready.Round(time.Millisecond))
	return rs, nil
}

// dispatch gives each server record to its series' log, under the client
// address the series knows.
func (rs *remoteServers) dispatch() {
	for m := range rs.srv.Proc.Msgs() {
		if m.Type != "rec" {
			continue
		}
		rs.mu.Lock()
		rl, ok := rs.outs[m.Client]
		delete(rs.outs, m.Client)
		rs.mu.Unlock()
		if !ok {
			continue
		}
		rec := handshake.ServerRecord{Client: rl.client, Accept: rl.accept, DurationNs: m.ServerNs}
		if m.Err != "" {
			rec.Err = errors.New("remote server: " + m.Err)
		}
		rl.log.add(rec)
	}
}

// stop ends the servers; nothing of the run stays running on the host.
func (rs *remoteServers) stop() error {
	if rs == nil {
		return nil
	}
	return rs.srv.Proc.Stop()
}

// err is why the remote servers stopped early, nil while they run.
func (rs *remoteServers) err() error {
	if rs == nil {
		return nil
	}
	return rs.srv.Proc.Err()
}

// failure is the run's error when the remote servers stopped early, nil
// when they run. After a failure of the run (runErr) it waits up to 10 s
// for the SSH session to tell: a dead server or link often shows first as
// a refused relay or a cancelled run, and ssh notices a silent link within
// ServerAliveInterval x ServerAliveCountMax (6 s).
func (rs *remoteServers) failure(runErr error) error {
	if rs == nil {
		return nil
	}
	if runErr != nil {
		select {
		case <-rs.done():
		case <-time.After(10 * time.Second):
		}
	}
	if err := rs.err(); err != nil {
		return fmt.Errorf("net:run: remote host: %w; the run was removed and not registered, the remote servers are stopped", err)
	}
	return nil
}

// done closes when the SSH session of the servers ends (nil without).
func (rs *remoteServers) done() <-chan struct{} {
	if rs == nil {
		return nil
	}
	return rs.srv.Proc.Done()
}

// relay accepts on ln (in namespace B) until ctx ends and forwards each
// connection to group gi's server on the host.
func (rs *remoteServers) relay(ctx context.Context, ln net.Listener, gi int, log *serverLog) error {
	go func() { <-ctx.Done(); ln.Close() }()
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		acc := time.Now()
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.Close()
			var d net.Dialer
			out, err := d.DialContext(ctx, "tcp", rs.srv.Addrs[gi])
			if err != nil {
				// Not a loss on the emulated link: the remote server
				// is gone, which ends the run.
				log.mu.Lock()
				if log.fatal == nil {
					log.fatal = fmt.Errorf("relay to the remote server %s: %w", rs.srv.Addrs[gi], err)
				}
				log.mu.Unlock()
				return
			}
			defer out.Close()
			rs.mu.Lock()
			rs.outs[out.LocalAddr().String()] = relayed{log: log, client: c.RemoteAddr().String(), accept: acc}
			rs.mu.Unlock()
			done := make(chan struct{}, 2)
			pipe := func(dst, src net.Conn) {
				io.Copy(dst, src)
				if tc, ok := dst.(*net.TCPConn); ok {
					tc.CloseWrite()
				}
				done <- struct{}{}
			}
			go pipe(out, c)
			go pipe(c, out)
			select {
			case <-done:
				<-done
			case <-ctx.Done():
			}
		}()
	}
}

// await waits up to d for the server record of client: a remote record
// comes over SSH and may arrive after the client has closed.
func (rs *remoteServers) await(log *serverLog, client string, d time.Duration) {
	if rs == nil || client == "" {
		return
	}
	deadline := time.Now().Add(d)
	for {
		log.mu.Lock()
		n := len(log.recs[client])
		log.mu.Unlock()
		if n > 0 || time.Now().After(deadline) {
			return
		}
		select {
		case <-rs.done():
			return
		case <-time.After(time.Millisecond):
		}
	}
}
