package tlsrun

import (
	"pqrepro/datasets/tlsdata"
	"pqrepro/experiments/instruments/capture"
	"pqrepro/experiments/tls/tlsjoin"
)

// inproc turns the connections the process made into the rows of
// inproc.csv.gz: what tlsjoin.Join needs besides the capture.
func (r *runner) inproc(conns []conn) []tlsjoin.Conn {
	out := make([]tlsjoin.Conn, len(conns))
	for i, cn := range conns {
		out[i] = tlsjoin.Conn{
			Seq: cn.seq, Config: r.configs[cn.step.Config].Name, Warmup: cn.step.Warmup,
			Client: cn.client.Local, Server: cn.client.Server,
			StartNs: cn.client.Start.UnixNano(), ClientNs: cn.client.DurationNs, ServerNs: cn.server.DurationNs,
			Path: r.configs[cn.step.Config].pathName(),
		}
	}
	return out
}

// joinConfigs are the run's configurations as tlsjoin reads them from
// configs.json.
func (r *runner) joinConfigs() []tlsjoin.Config {
	out := make([]tlsjoin.Config, len(r.configs))
	for i, c := range r.configs {
		out[i] = tlsjoin.Config{Name: c.Name, CertKey: string(c.Key), Group: c.GroupName, Chain: c.Chain,
			Stack: c.stackName(), KeyShare: string(c.KeyShare), Path: c.Path}
	}
	return out

}

// join is tlsjoin.Join over the runner's connections and servers of one
// path (the tests' entry; Run derives the records of every path with
// tlsjoin.DeriveRecords).
func (r *runner) join(conns []conn, caps []capture.Record) ([]tlsdata.Record, tlsjoin.Stats, error) {
	servers := make([]string, len(r.servers))
	for i, s := range r.servers {
		servers[i] = s.addr
	}
	return tlsjoin.Join(r.joinConfigs(), servers, r.inproc(conns), caps)
}

// pathName is the configuration's path, "" read as loopback.
func (c Config) pathName() string {
	if c.Path == "" {
		return PathLoopback
	}
	return c.Path
}
