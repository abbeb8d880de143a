package capture_test

import (
	"context"
	"fmt"
	"log"

	"pqrepro/experiments/instruments/capture"
)

// ExampleStart captures a TLS server's traffic on lo, keeping only its
// port: other processes' loopback traffic stays out of the file. It needs
// root, so it is compiled but not run by go test.
func ExampleStart() {
	c, err := capture.Start(context.Background(), capture.Options{
		Interface: "lo",
		Path:      "run.pcapng",
		Ports:     []uint16{8443},
	})
	if err != nil {
		log.Fatal(err) // wraps capture.ErrNeedRoot without root
	}
	// ... run connections to 127.0.0.1:8443 with tls.Config{KeyLogWriter: c.KeyLog()} ...
	st, err := c.Stop()
	if err != nil {
		log.Fatal(err)
	}
	if err := st.Valid(); err != nil {
		log.Fatal(err) // kernel drops or cut packets
	}
	fmt.Println(st.Packets, "packets")
}
