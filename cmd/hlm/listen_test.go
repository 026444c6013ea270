package main

import (
	"net"
	"strings"
	"testing"
)

func TestListenSaysWhatToDo(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	for _, tc := range []struct {
		addr, want string
	}{
		{"bad", "--listen bad: listen tcp: address bad: missing port in address (want HOST:PORT"},
		{"127.0.0.1:99999", "(want HOST:PORT"},
		{taken.Addr().String(), "address already in use (another program listens there"},
	} {
		ln, err := listen("--listen", tc.addr)
		if err == nil {
			ln.Close()
			t.Errorf("listen(%q): no error", tc.addr)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("listen(%q): %v, want it to contain %q", tc.addr, err, tc.want)
		}
	}
	ln, err := listen("--listen", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen on a free port: %v", err)
	}
	ln.Close()
}
