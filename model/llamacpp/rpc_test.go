package llamacpp

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestRPC joins a second "host" through llama.cpp's RPC backend: a
// ggml-rpc-server on loopback (built beside the library by
// internal/libllama/build.sh with LIBLLAMA_TARGETS=ggml-rpc-server) takes
// every layer (ngl=99), and the model computes the logits it computes
// locally, bit for bit (the same CPU kernels on both sides), through
// sessions batched as hlm serve batches them.
func TestRPC(t *testing.T) {
	needLib(t)
	lib, _ := LibraryPath()
	server := filepath.Join(filepath.Dir(lib), "ggml-rpc-server")
	if _, err := os.Stat(server); err != nil {
		t.Skipf("no %s: LIBLLAMA_TARGETS=ggml-rpc-server internal/libllama/build.sh builds it", server)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	// The server's output is read while it runs: exec's goroutine writes
	// it, the test reads it (a bytes.Buffer raced under -race).
	var out lockedBuffer
	cmd := exec.Command(server, "-H", "127.0.0.1", "-p", fmt.Sprint(port), "-t", "1")
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Registered first, run last: the models (closed by openLC's
	// cleanups) let go of the server before it is killed.
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	ep := fmt.Sprintf("127.0.0.1:%d", port)
	for i := 0; ; i++ {
		if c, err := net.Dial("tcp", ep); err == nil {
			c.Close()
			break
		}
		if i == 100 {
			t.Fatalf("ggml-rpc-server did not listen: %s", out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	remote := openLC(t, "qwen3.gguf", "@c=128@np=2@ngl=99@rpc="+ep)
	local := openLC(t, "qwen3.gguf", "@c=128@np=2@ngl=0")
	devs := strings.Join(remote.Library().Devices(), "; ")
	if !strings.Contains(devs, ep) {
		t.Errorf("devices %q: no RPC device for %s", devs, ep)
	}
	sc := defaultScript(t, "qwen3_golden")
	sc.prompts, sc.draftL = sc.prompts[:2], sc.draftL[:2]
	got, want := sc.play(t, remote, true, false), sc.play(t, local, true, false)
	if ok, i, j := sameBits(got, want); !ok {
		d, _ := diff(got, want)
		t.Errorf("over RPC the logits differ from local ones at row %d, token %d (max |Δ| %.3g)", i, j, d)
	}
	if !strings.Contains(out.String(), "Accepted client connection") {
		t.Errorf("the RPC server saw no client:\n%s", out.String())
	}
	// A model opened afterwards without rpc= does not use the server's
	// device: it works once the server is gone. (Closing a model whose RPC
	// server is gone aborts in llama.cpp: close it first.)
	remote.Close()
	cmd.Process.Kill()
	cmd.Wait()
	after := openLC(t, "qwen3.gguf", "@c=128@np=1@t=1")
	if _, err := after.NewSession().Eval(sc.prompts[0]); err != nil {
		t.Errorf("a local model after the RPC server went away: %v", err)
	}
}

// lockedBuffer is a bytes.Buffer written and read from different
// goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
