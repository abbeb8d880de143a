package sample_test

import (
	"fmt"
	"strings"

	"pqrepro/analysis/sample"
)

func ExampleRead() {
	xs, err := sample.Read(strings.NewReader("conn,ths_ms\n1,3.91\n2,4.02\n"), "run.csv", "ths_ms")
	fmt.Println(xs, err)
	_, err = sample.Read(strings.NewReader("3.91\noops\n"), "base.txt", "")
	fmt.Println(err)
	// Output:
	// [3.91 4.02] <nil>
	// base.txt:2: "oops" is not a number
}
