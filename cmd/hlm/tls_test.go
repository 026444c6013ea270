package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hlmproject/hlm/cloud"
	"github.com/hlmproject/hlm/edge"
	"github.com/hlmproject/hlm/hybrid"
	"github.com/hlmproject/hlm/model/builtin"
	"github.com/hlmproject/hlm/model/llama"
)

// TestTLS: a certificate made by `hlm tls-cert` secures a server; a device
// that trusts it generates, one that does not is refused.
func TestTLS(t *testing.T) {
	const stories = builtin.DefaultLLM
	dir := t.TempDir()
	cert, key := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	var stderr bytes.Buffer
	if code := run(context.Background(), []string{"tls-cert", "--host", "127.0.0.1,localhost", "--cert", cert, "--key", key}, &stderr, &stderr); code != 0 {
		t.Fatalf("tls-cert: %s", stderr.String())
	}
	pair, err := tls.LoadX509KeyPair(cert, key)
	if err != nil {
		t.Fatal(err)
	}
	llm, _ := llama.OpenSpec(stories, "")
	slm, _ := llama.OpenSpec(stories+"@exit=2", "")
	srv, _ := cloud.New(cloud.Config{LLM: llm})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(context.Background(), tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{pair}}))
	defer srv.Shutdown(context.Background())
	pem, _ := os.ReadFile(cert)
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	p := hybrid.DefaultParams()
	p.Method, p.MaxTokens = hybrid.HLM, 8
	g, _ := edge.NewGenerator(edge.Config{Addr: ln.Addr().String(), TLS: &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}}, slm, p)
	if r, _, err := g.One(context.Background(), p, "Once upon a time", nil); err != nil || len(r.Tokens) != 8 {
		t.Fatalf("TLS generation: %v", err)
	}
	g.Conn.TLS = &tls.Config{ServerName: "127.0.0.1"} // system roots: the self-signed cert is not trusted
	g.Conn.DialTimeout = 5 * time.Second
	_, _, err = g.One(context.Background(), p, "Once upon a time", nil)
	var ue x509.UnknownAuthorityError
	if !errors.As(err, &ue) {
		t.Errorf("untrusted certificate: err = %v, want an unknown-authority error", err)
	}
}

// TestTLSMismatchSaysWhatToDo: a device without TLS against a TLS server,
// and one with TLS against a plain server, get an error that says which
// flag to change (not a bare EOF or "first record does not look like a TLS
// handshake"); --openai on a taken address fails before it is announced.
func TestTLSMismatchSaysWhatToDo(t *testing.T) {
	dir := t.TempDir()
	cert, key := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if _, _, err := runHLM(t, "tls-cert", "--host", "127.0.0.1", "--cert", cert, "--key", key); err != nil {
		t.Fatal(err)
	}
	pair, err := tls.LoadX509KeyPair(cert, key)
	if err != nil {
		t.Fatal(err)
	}
	llm, err := llama.OpenSpec(builtin.DefaultLLM, "")
	if err != nil {
		t.Fatal(err)
	}
	tlsAddr := loopbackServer(t, llm, func(ln net.Listener) net.Listener {
		return tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{pair}})
	})
	plainAddr := loopbackServer(t, llm, nil)
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	run := []string{"edge", "--slm", "builtin:stories260K-draft", "--prompt", "Once", "--max-tokens", "2"}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"plain device, TLS server", []string{"--server", tlsAddr}, "connect with --tls"},
		{"TLS device, plain server", []string{"--server", plainAddr, "--tls-ca", cert}, "connect without --tls"},
		{"--openai on a taken address", []string{"--server", plainAddr, "--openai", taken.Addr().String()}, "--openai " + taken.Addr().String()},
	} {
		args := append(run, c.args...)
		if slices.Contains(c.args, "--openai") { // it serves its clients' prompts
			args = slices.DeleteFunc(slices.Clone(args), func(a string) bool { return a == "--prompt" || a == "Once" })
		}
		_, stderr, err := runHLM(t, args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", c.name, err, c.want)
		}
		if strings.Contains(stderr, "OpenAI-compatible API on") {
			t.Errorf("%s: announced the API: %q", c.name, stderr)
		}
	}
}
