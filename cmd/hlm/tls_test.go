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
