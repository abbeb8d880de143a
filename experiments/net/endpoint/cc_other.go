//go:build !linux

package main

import (
	"errors"
	"net"
	"syscall"
)

// setCC refuses a congestion control: TCP_CONGESTION is Linux's.
func setCC(name string) func(network, address string, c syscall.RawConn) error {
	if name == "" {
		return nil
	}
	return func(string, string, syscall.RawConn) error {
		return errors.New("-cc: setting a socket's congestion control needs Linux")
	}
}

// congestion is "" where the socket's congestion control cannot be read.
func congestion(net.Conn) string { return "" }
