package capture

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"pqrepro/experiments/instruments/handshake"
)

var update = flag.Bool("update", false, "recapture testdata/golden.pcapng on lo (root) and rewrite testdata/golden.json")

const (
	goldenCapture = "testdata/golden.pcapng"
	goldenJSON    = "testdata/golden.json"
)

// makeGolden captures two X25519/Ed25519 connections and one
// SecP384r1MLKEM1024 connection forced through a HelloRetryRequest.
func makeGolden(t *testing.T) {
	needRoot(t)
	tmp := filepath.Join(t.TempDir(), "golden.pcapng")
	c, err := Start(context.Background(), Options{Interface: "lo", Path: tmp})
	if err != nil {
		t.Fatal(err)
	}
	cfgs := []handshake.Config{
		{Group: tls.X25519, Cert: handshake.CertConfig{Key: handshake.Ed25519, Seed: 1}, N: 2},
		{Group: tls.SecP384r1MLKEM1024, ClientGroups: []tls.CurveID{tls.X25519MLKEM768, tls.SecP384r1MLKEM1024}, ExpectHRR: true, Cert: handshake.CertConfig{Key: handshake.Ed25519, Seed: 1}, N: 1},
	}
	for _, cfg := range cfgs {
		cfg.KeyLog = c.KeyLog()
		if _, err := handshake.Run(context.Background(), cfg); err != nil {
			c.Stop()
			t.Fatal(err)
		}
	}
	st, err := c.Stop()
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Valid(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(tmp)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(goldenCapture, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

type goldenRecord struct {
	Record
	Verified bool `json:"client_finished_verified"`
}

func TestGolden(t *testing.T) {
	if *update {
		makeGolden(t)
	}
	f, err := os.Open(goldenCapture)
	if err != nil {
		t.Fatalf("%v (regenerate as root with: go test ./experiments/instruments/capture -run TestGolden -update)", err)
	}
	defer f.Close()
	res, err := Read(f, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var gs []goldenRecord
	for _, r := range res.Records {
		gs = append(gs, goldenRecord{r, r.ClientFinishedVerified})
	}
	got, err := json.MarshalIndent(gs, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	if *update {
		if err := os.WriteFile(goldenJSON, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(goldenJSON)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("records differ from %s (rerun with -update if the change is intended):\n%s", goldenJSON, got)
	}
	// The golden capture must show what it was made to show.
	if len(res.Records) != 3 || !res.Records[2].HRR || res.Records[2].Group != "SecP384r1MLKEM1024" {
		t.Fatalf("golden capture content unexpected: %v", res.Records)
	}
	if r := res.Records; r[0].ClientHello2Ns != nil || r[1].ClientHello2Ns != nil || r[2].ClientHello2Ns == nil ||
		!(*r[2].ClientHelloNs < *r[2].ClientHello2Ns && *r[2].ClientHello2Ns < *r[2].ServerHelloNs) {
		t.Errorf("second ClientHello: want it only after the HelloRetryRequest, between ClientHello and ServerHello: %v, %v, %v", r[0].ClientHello2Ns, r[1].ClientHello2Ns, r[2].ClientHello2Ns)
	}
	for _, r := range res.Records {
		if !r.Complete || !r.ClientFinishedVerified {
			t.Errorf("golden record %v not complete and verified", r)
		}
	}
}
