package netrun

import (
	"errors"
	"strconv"
	"syscall"
)

func itoa(i int) string     { return strconv.Itoa(i) }
func fmtF(f float64) string { return strconv.FormatFloat(f, 'f', 3, 64) }

var (
	errConnReset = syscall.ECONNRESET
	errPlain     = errors.New("x509: certificate signed by unknown authority")
)
