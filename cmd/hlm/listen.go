package main

import (
	"errors"
	"fmt"
	"net"
	"syscall"
)

// listen binds a TCP address for flag (e.g. "--listen") and, when it
// cannot, says what the flag wants and the usual way out: an address
// without a port, a port another program holds, a port below 1024 without
// the privilege, or a host that is not one of this machine's addresses.
func listen(flag, addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err == nil {
		return ln, nil
	}
	var hint string
	var addrErr *net.AddrError
	switch {
	case errors.As(err, &addrErr):
		hint = "want HOST:PORT, e.g. 127.0.0.1:7140, or :7140 for every interface"
	case errors.Is(err, syscall.EADDRINUSE):
		hint = "another program listens there: stop it or choose another port"
	case errors.Is(err, syscall.EACCES):
		hint = "ports below 1024 need privileges: choose a port of 1024 or more"
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		hint = "that host is not an address of this machine: use 127.0.0.1, 0.0.0.0 or one of its interfaces"
	}
	if hint == "" {
		return nil, fmt.Errorf("%s %s: %w", flag, addr, err)
	}
	return nil, fmt.Errorf("%s %s: %w (%s)", flag, addr, err, hint)
}
