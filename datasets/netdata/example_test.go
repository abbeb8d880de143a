package netdata_test

import (
	"bytes"
	"fmt"

	"pqrepro/datasets/netdata"
)

func ExampleReadRecords() {
	ths := int64(2345000)
	rows := []netdata.Row{
		{Scenario: "lan", Round: 20, Group: "X25519", StartNs: 1, OK: true, Client: "10.77.0.1:40000",
			Cap: &netdata.Capture{ThsNs: &ths, Complete: true, Group: "X25519", PacketsC2S: 7, PacketsS2C: 6,
				FrameBytesC2S: 900, FrameBytesS2C: 2400, PayloadBytesC2S: 600, PayloadBytesS2C: 2100}},
		{Scenario: "lan", Round: 20, Group: "X25519", Seq: 1, Index: 1, StartNs: 2, Failure: "timeout"},
	}
	b, err := netdata.EncodeRecords(rows)
	if err != nil {
		fmt.Println(err)
		return
	}
	back, err := netdata.ReadRecords(bytes.NewReader(b), netdata.RecordsFile)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range back {
		if r.Cap != nil && r.Cap.ThsNs != nil {
			fmt.Printf("%s %s seq %d: %.3f ms, %s\n", r.Scenario, r.Group, r.Seq, float64(*r.Cap.ThsNs)/1e6, r.ToolchainName())
		} else {
			fmt.Printf("%s %s seq %d: %s\n", r.Scenario, r.Group, r.Seq, r.Failure)
		}
	}
	// Output:
	// lan X25519 seq 0: 2.345 ms, go1.27.3
	// lan X25519 seq 1: timeout
}
