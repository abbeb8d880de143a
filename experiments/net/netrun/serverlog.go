package netrun

import (
	"io"
	"sync"
	"time"

	"pqrepro/experiments/instruments/handshake"
)

// lockedWriter serialises writes of the series' goroutines to the log.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// serverLog collects the servers' records by client address.
type serverLog struct {
	mu    sync.Mutex
	recs  map[string][]handshake.ServerRecord
	fatal error
}

func (s *serverLog) add(r handshake.ServerRecord) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.Err != nil && r.DurationNs > 0 && s.fatal == nil {
		// The handshake completed but the connection is not what the
		// configuration says: an error, never a sample.
		s.fatal = r.Err
	}
	s.recs[r.Client] = append(s.recs[r.Client], r)
}

// take returns the server's handshake time of the connection from client
// accepted at or after t0, or 0.
func (s *serverLog) take(client string, t0 time.Time) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	rs := s.recs[client]
	for i, r := range rs {
		if !r.Accept.Before(t0) {
			s.recs[client] = append(rs[:i:i], rs[i+1:]...)
			if r.Err != nil {
				return 0
			}
			return r.DurationNs
		}
	}
	return 0
}

func (s *serverLog) err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fatal
}
