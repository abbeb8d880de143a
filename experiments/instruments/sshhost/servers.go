package sshhost

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"slices"
	"time"
)

// Servers is the serve role running on a host: one TLS server per
// configuration, as StartServers left them ready.
type Servers struct {
	Host *Host
	Proc *Process
	Dep  Deployed
	// Harness is the harness program on the host (zero when every
	// configuration uses the go stack).
	Harness Deployed
	Prov    Provenance
	Addrs   []string // per configuration, ip:port on the host
	// Ready is the time from the architecture probe to the last server
	// listening: build, copy (or find) the binary, provenance, start.
	Ready time.Duration
}

// StartServers starts a TLS study's servers on the remote host and waits
// until every one listens.
//
// It builds the static pqrepro for the host's architecture from the
// module at root, deploys it (and harness, the local harness program,
// when a configuration uses a stack other than go: one of the Stacks
// that cmd/pqrepro passes to RunRole), records the host's provenance and
// starts the serve role with cs, waiting until every server listens. On
// an error nothing is left running on the host.
func StartServers(ctx context.Context, h *Host, root, harness string, cs []ServerConfig) (*Servers, error) {
	t0 := time.Now()
	s := &Servers{Host: h}
	arch, err := h.Arch(ctx)
	if err != nil {
		return nil, err
	}
	bin, err := BuildBinary(ctx, root, arch)
	if err != nil {
		return nil, err
	}
	if s.Dep, err = h.Deploy(ctx, bin, "pqrepro"); err != nil {
		return nil, err
	}
	var extra []string
	if i := slices.IndexFunc(cs, func(c ServerConfig) bool { return c.Stack != "" && c.Stack != "go" }); i >= 0 {
		if arch != runtime.GOARCH {
			return nil, fmt.Errorf("ssh %s: the %s harness is built for %s here and the host is %s: run the %s stack on the other paths only", h.Dest(), cs[i].Stack, runtime.GOARCH, arch, cs[i].Stack)
		}
		if s.Harness, err = h.Deploy(ctx, harness, "pqssl"); err != nil {
			return nil, err
		}
		extra = []string{"-harness", s.Harness.Path}
	}
	if s.Prov, err = h.Provenance(ctx, s.Dep, 0); err != nil {
		return nil, err
	}
	js, err := json.Marshal(cs)
	if err != nil {
		return nil, err
	}
	if s.Proc, err = h.Start(ctx, s.Dep.Path, "serve", append([]string{"-configs", string(js)}, extra...)...); err != nil {
		return nil, err
	}
	s.Addrs = make([]string, len(cs))
	for ready := false; !ready; {
		select {
		case m, ok := <-s.Proc.Msgs():
			if !ok {
				<-s.Proc.Done()
				return nil, s.Proc.Err()
			}
			switch {
			case m.Type == "listen" && m.I >= 0 && m.I < len(cs):
				s.Addrs[m.I] = m.Addr
			case m.Type == "ready":
				ready = true
			}
		case <-ctx.Done():
			s.Proc.Stop()
			return nil, ctx.Err()
		}
	}
	for i, a := range s.Addrs {
		if a == "" {
			s.Proc.Stop()
			return nil, fmt.Errorf("ssh %s: server %d did not report its address", h.Dest(), i)
		}
	}
	s.Ready = time.Since(t0)
	return s, nil
}
