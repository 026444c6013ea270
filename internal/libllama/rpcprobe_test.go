package libllama

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// TestProbeRPC: the probe accepts a server that answers the handshake as
// ggml-rpc-server does and refuses, with a reason and without hanging,
// what llama.cpp's client would abort the process on: nothing listening,
// a server that never answers, one that hangs up, one that answers
// something else, one of another major version of the protocol, and an
// endpoint that is not host:port.
func TestProbeRPC(t *testing.T) {
	old := rpcProbeTimeout
	rpcProbeTimeout = 300 * time.Millisecond
	t.Cleanup(func() { rpcProbeTimeout = old })
	serve := func(handle func(c net.Conn)) string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				go func() { defer c.Close(); handle(c) }()
			}
		}()
		return ln.Addr().String()
	}
	hello := func(answer []byte) func(c net.Conn) {
		return func(c net.Conn) {
			req := make([]byte, 1+8+rpcCapsSize)
			if _, err := io.ReadFull(c, req); err != nil || req[0] != rpcCmdHello || binary.LittleEndian.Uint64(req[1:]) != rpcCapsSize {
				return // as ggml-rpc-server: a client that does not say HELLO is dropped
			}
			c.Write(answer)
		}
	}
	good := make([]byte, 8+rpcHelloSize)
	binary.LittleEndian.PutUint64(good, rpcHelloSize)
	good[8] = 7 // protocol 7.0.0
	old4 := bytes.Clone(good)
	old4[8], old4[10] = 6, 2 // protocol 6.0.2: llama.cpp 0.4.0's
	newer := bytes.Clone(good)
	newer[8] = 8
	short := make([]byte, 8+3)
	binary.LittleEndian.PutUint64(short, 3)
	goodEP, silentEP := serve(hello(good)), serve(func(c net.Conn) { time.Sleep(2 * time.Second) })
	hangupEP, shortEP := serve(func(c net.Conn) {}), serve(hello(short))
	oldEP, newerEP := serve(hello(old4)), serve(hello(newer))
	// An HTTP server answers a request it cannot parse with a 400.
	httpEP := serve(func(c net.Conn) {
		c.Read(make([]byte, 64))
		io.WriteString(c, "HTTP/1.1 400 Bad Request\r\n\r\n")
	})
	// Last, so that no listener above takes its port again.
	closed, _ := net.Listen("tcp", "127.0.0.1:0")
	closedEP := closed.Addr().String()
	closed.Close()
	for _, c := range []struct {
		name, ep, want string
	}{
		{"ggml-rpc-server", goodEP, ""},
		{"nothing listening", closedEP, "is ggml-rpc-server running there"},
		{"silent", silentEP, "did not answer the handshake"},
		{"hangs up", hangupEP, "closed the connection"},
		{"another answer", shortEP, "another protocol version, or not one"},
		{"llama.cpp 0.4's server", oldEP, "speaks version 6.0.2 of llama.cpp's RPC protocol (llama.cpp 0.4.x), this libllama version 7.x (llama.cpp 0.5.x)"},
		{"a newer server", newerEP, "version 8.0.0 of llama.cpp's RPC protocol (a llama.cpp newer than 0.5.x)"},
		{"an HTTP server", httpEP, `does not speak llama.cpp's RPC protocol: it answered the handshake with "HTTP/1.1"…, HTTP`},
		{"no port", "localhost", "want host:port"},
		{"bad port", "localhost:http", "want host:port"},
	} {
		start := time.Now()
		err := probeRPC(c.ep, 7)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: error %v, want one saying %q", c.name, err, c.want)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%s: the probe took %v", c.name, d)
		}
	}
}

// TestSameServer: two names of one ggml-rpc-server are refused (llama.cpp
// would wait for good on the second connection), a name given twice and
// different servers are not, and a name that does not resolve is left to
// the probe.
func TestSameServer(t *testing.T) {
	hosts := map[string][]string{
		"localhost":  {"127.0.0.1", "::1"},
		"127.0.0.1":  {"127.0.0.1"},
		"gpu1":       {"10.0.0.21"},
		"gpu2":       {"10.0.0.22"},
		"gpu1-alias": {"10.0.0.21"},
	}
	lookup := func(_ context.Context, h string) ([]string, error) {
		if a, ok := hosts[h]; ok {
			return a, nil
		}
		return nil, errors.New("no such host")
	}
	for _, c := range []struct {
		eps  []string
		want string // in the error; "" = accepted
	}{
		{[]string{"127.0.0.1:50052", "localhost:50052"}, "127.0.0.1:50052 and localhost:50052 are the same server"},
		{[]string{"gpu1:50052", "gpu2:50052", "gpu1-alias:50052"}, "gpu1:50052 and gpu1-alias:50052"},
		{[]string{"127.0.0.1:50052", "127.0.0.1:50052"}, ""},
		{[]string{"localhost:50052", "localhost:50053"}, ""},
		{[]string{"gpu1:50052", "gpu2:50052"}, ""},
		{[]string{"nowhere:1", "nowhere:1", "gpu1:1"}, ""},
	} {
		err := sameServer(c.eps, lookup)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%v: %v", c.eps, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%v: err = %v, want %q", c.eps, err, c.want)
		}
	}
}
