package libllama

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"
)

// rpcProbeTimeout bounds each step of probeRPC: the connection, and the
// answer to the handshake.
var rpcProbeTimeout = 10 * time.Second

// The handshake of llama.cpp's RPC protocol (ggml/src/ggml-rpc at the
// supported versions): the command byte RPC_CMD_HELLO, the request's size
// as a little-endian uint64 and the request (conn_caps, 24 bytes of
// transport capabilities: zero asks for plain TCP); the answer is its size
// and {major, minor, patch, padding, conn_caps}.
const (
	rpcCmdHello  = 14
	rpcCapsSize  = 24
	rpcHelloSize = 4 + rpcCapsSize
)

// probeRPC checks that a ggml-rpc-server answers at endpoint, speaking
// major version major of the RPC protocol, before llama.cpp connects to
// it: llama.cpp's RPC client aborts the process (GGML_ABORT) when it
// cannot connect or the handshake fails — also on a server of another
// major version, a host whose llama.cpp was updated apart from the others
// —, so a typo in rpc=, a host not up yet or one of another version would
// end hlm instead of giving an error. (It also aborts on a server of a
// newer minor version than its own, which the library does not report:
// within one llama.cpp version the minor is the same.) The probe's
// connection is closed at once; a ggml-rpc-server serves one client at a
// time and then takes the next.
func probeRPC(endpoint string, major uint8) error {
	host, port, ok := strings.Cut(endpoint, ":") // as llama.cpp splits it
	if _, err := strconv.Atoi(port); !ok || host == "" || err != nil {
		return fmt.Errorf("RPC server %q: want host:port", endpoint)
	}
	c, err := net.DialTimeout("tcp", net.JoinHostPort(host, port), rpcProbeTimeout)
	if err != nil {
		return fmt.Errorf("RPC server %s: %w (is ggml-rpc-server running there, and reachable from here?)", endpoint, err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(rpcProbeTimeout))
	req := make([]byte, 1+8+rpcCapsSize)
	req[0] = rpcCmdHello
	binary.LittleEndian.PutUint64(req[1:], rpcCapsSize)
	if _, err := c.Write(req); err != nil {
		return fmt.Errorf("RPC server %s: sending the handshake: %w", endpoint, err)
	}
	var size [8]byte
	if _, err := io.ReadFull(c, size[:]); err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return fmt.Errorf("RPC server %s accepted the connection but did not answer the handshake within %v (a ggml-rpc-server serves one client at a time: is another process using it?)", endpoint, rpcProbeTimeout)
		}
		return fmt.Errorf("RPC server %s closed the connection without answering the handshake (%v): not a ggml-rpc-server, or one of another protocol version", endpoint, err)
	}
	if n := binary.LittleEndian.Uint64(size[:]); n != rpcHelloSize {
		if n > 1<<20 { // not a size: another protocol's bytes
			what := "another protocol"
			if strings.HasPrefix(string(size[:]), "HTTP/") {
				what = "HTTP (a web, health or metrics endpoint?)"
			}
			return fmt.Errorf("RPC server %s does not speak llama.cpp's RPC protocol: it answered the handshake with %q…, %s; rpc= wants the host:port of a ggml-rpc-server", endpoint, size[:], what)
		}
		return fmt.Errorf("RPC server %s: the answer to the handshake is %d bytes, not %d: a ggml-rpc-server of another protocol version, or not one (hlm supports llama.cpp %s)", endpoint, n, rpcHelloSize, SupportedVersions)
	}
	var rsp [rpcHelloSize]byte
	if _, err := io.ReadFull(c, rsp[:]); err != nil {
		return fmt.Errorf("RPC server %s: reading the handshake's answer: %w", endpoint, err)
	}
	if rsp[0] != major {
		return fmt.Errorf("RPC server %s speaks version %d.%d.%d of llama.cpp's RPC protocol (%s), this libllama version %d.x (%s), and llama.cpp's client would abort on it: run the ggml-rpc-server of this library's llama.cpp version on every host", endpoint, rsp[0], rsp[1], rsp[2], rpcProtoOf(rsp[0]), major, rpcProtoOf(major))
	}
	return nil
}

// rpcProtoOf names the llama.cpp versions that speak major version m of
// the RPC protocol, from the supported versions (the protocol's major
// version only grows).
func rpcProtoOf(m uint8) string {
	first, last := versions[0], versions[len(versions)-1]
	switch {
	case m < first.rpcMajor:
		return "a llama.cpp older than " + first.minor + ".0"
	case m > last.rpcMajor:
		return "a llama.cpp newer than " + last.minor + ".x"
	}
	for _, v := range versions {
		if v.rpcMajor == m {
			return "llama.cpp " + v.minor + ".x"
		}
	}
	return "a llama.cpp version hlm does not know"
}

// sameServer refuses two names of one ggml-rpc-server ("localhost:50052"
// and "127.0.0.1:50052"): the server takes one client at a time, so
// llama.cpp's second connection would wait for the first to end, which
// it never does while the model is loaded — a load that hangs for good.
// A name given twice is one server (llama.cpp's own list dedups it).
// Names that do not resolve are left to the probe to report.
func sameServer(endpoints []string, lookup func(ctx context.Context, host string) ([]string, error)) error {
	seen := map[string]string{} // ip:port → the first endpoint that reaches it
	for _, ep := range endpoints {
		host, port, ok := strings.Cut(ep, ":")
		if !ok {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), rpcProbeTimeout)
		addrs, err := lookup(ctx, host)
		cancel()
		if err != nil {
			continue
		}
		for _, a := range addrs {
			key := net.JoinHostPort(a, port)
			if first, ok := seen[key]; ok && first != ep {
				return fmt.Errorf("RPC servers %s and %s are the same server (both reach %s): a ggml-rpc-server serves one client at a time, so name it once in rpc=", first, ep, key)
			}
			seen[key] = ep
		}
	}
	return nil
}
