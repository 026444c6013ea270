package libllama

import (
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

// probeRPC checks that a ggml-rpc-server answers at endpoint before
// llama.cpp connects to it: llama.cpp's RPC client aborts the process
// (GGML_ABORT) when it cannot connect or the handshake fails, so a typo in
// rpc= or a host not up yet would end hlm instead of giving an error. The
// probe's connection is closed at once; a ggml-rpc-server serves one
// client at a time and then takes the next.
func probeRPC(endpoint string) error {
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
		return fmt.Errorf("RPC server %s: the answer to the handshake is %d bytes, not %d: not a ggml-rpc-server of the supported llama.cpp versions (%s)", endpoint, n, rpcHelloSize, SupportedVersions)
	}
	var rsp [rpcHelloSize]byte
	if _, err := io.ReadFull(c, rsp[:]); err != nil {
		return fmt.Errorf("RPC server %s: reading the handshake's answer: %w", endpoint, err)
	}
	return nil
}
