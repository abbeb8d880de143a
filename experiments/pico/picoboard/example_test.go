package picoboard_test

import (
	"context"
	"fmt"
	"time"

	"pqrepro/experiments/pico/picoboard"
)

func ExampleEncodeUF2() {
	uf2, err := picoboard.EncodeUF2([]picoboard.Segment{{Addr: 0x20000000, Data: make([]byte, 300)}}, picoboard.UF2FamilyRP2040)
	if err != nil {
		fmt.Println(err)
		return
	}
	blocks, _ := picoboard.DecodeUF2(uf2)
	fmt.Printf("%d bytes, %d blocks, first at 0x%08x\n", len(uf2), len(blocks), blocks[0].Addr)
	// Output: 1024 bytes, 2 blocks, first at 0x20000000
}

func ExampleHostTimings() {
	// A fake clock that advances 1 ms per reading makes the output stable;
	// leave Clock nil to time for real.
	t := time.Unix(0, 0)
	clock := func() time.Time { t = t.Add(time.Millisecond); return t }
	p := picoboard.Profile{Name: "demo", ECC: 2}
	timings, err := picoboard.HostTimings(context.Background(), picoboard.HostConfig{Profile: p, Schemes: []string{"ecdh-p256"}, Clock: clock})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, h := range timings {
		fmt.Println(h.Scheme, h.Op, h.Lib, h.N, h.Mean())
	}
	// Output:
	// ecdh-p256 keygen crypto/ecdh 2 1ms
	// ecdh-p256 shared crypto/ecdh 2 1ms
	// ecdh-p256 exchange crypto/ecdh 2 1ms
}

func ExampleImage_Provenance() {
	img := picoboard.Image{Name: "classic", FirmwareID: "0123456789abcdef", Compiler: "arm-none-eabi-gcc 12.2.1",
		CFlags: []string{"-O3"}, MbedTLS: &picoboard.MbedTLSSource{Package: "mbedtls", Version: picoboard.MbedTLSVersion}}
	p := img.Provenance()
	fmt.Println(p["firmware_id"], p["compiler"], p["mbedtls.version"])
	// Output: 0123456789abcdef arm-none-eabi-gcc 12.2.1 2.28.3-1
}
