package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
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
		{"TLS device without --tls-ca, self-signed server", []string{"--server", tlsAddr, "--tls"}, "pass --tls-ca CERT.pem"},
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

// TestTLSCertDays: --days is a whole number of days from 1 to 100 years,
// the certificate's NotAfter that many calendar days away; 200000 days
// (which overflowed a time.Duration into an expired certificate) and the
// like are refused.
func TestTLSCertDays(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		days string
		want string // "": written
	}{
		{"0", "want 1 to 36500"},
		{"-1", "want 1 to 36500"},
		{"36501", "want 1 to 36500"},
		{"200000", "want 1 to 36500"},
		{"1", ""},
		{"365", ""},
		{"36500", ""},
	} {
		cert, key := filepath.Join(dir, "c"+c.days+".pem"), filepath.Join(dir, "k"+c.days+".pem")
		before := time.Now()
		_, _, err := runHLM(t, "tls-cert", "--days", c.days, "--cert", cert, "--key", key)
		if c.want != "" {
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("--days %s: %v, want an error saying %q", c.days, err, c.want)
			}
			if _, err := os.Stat(cert); err == nil {
				t.Errorf("--days %s: %s written", c.days, cert)
			}
			continue
		}
		if err != nil {
			t.Errorf("--days %s: %v", c.days, err)
			continue
		}
		pair, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			t.Fatal(err)
		}
		leaf, err := x509.ParseCertificate(pair.Certificate[0])
		if err != nil {
			t.Fatal(err)
		}
		n, _ := strconv.Atoi(c.days)
		if lo, hi := before.AddDate(0, 0, n).Add(-time.Minute), time.Now().AddDate(0, 0, n).Add(time.Minute); leaf.NotAfter.Before(lo) || leaf.NotAfter.After(hi) {
			t.Errorf("--days %s: NotAfter %v, want %d days from now (%v)", c.days, leaf.NotAfter, n, before.AddDate(0, 0, n))
		}
	}
}

// TestTLSCertKeyMode: the private key is written 0600, also over a key
// file that existed with mode 0644 (with --force: without it existing files
// are refused and left as they were), and no temporary file is left.
func TestTLSCertKeyMode(t *testing.T) {
	dir := t.TempDir()
	cert := filepath.Join(dir, "cert.pem")
	for _, c := range []struct {
		name     string
		existing bool
	}{{"new key file", false}, {"existing 0644 key file", true}} {
		key := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-")+".pem")
		if c.existing {
			if err := os.WriteFile(key, []byte("old key"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(key, 0o644); err != nil { // whatever the umask
				t.Fatal(err)
			}
		}
		args := []string{"tls-cert", "--cert", cert, "--key", key}
		if c.existing {
			// Without --force files that exist are refused, untouched.
			if _, _, err := runHLM(t, args...); err == nil || !strings.Contains(err.Error(), "--force") {
				t.Fatalf("%s without --force: %v, want a refusal naming --force", c.name, err)
			}
			if b, _ := os.ReadFile(key); string(b) != "old key" {
				t.Fatalf("%s: refused, but the key file was changed", c.name)
			}
			args = append(args, "--force")
		}
		if _, _, err := runHLM(t, args...); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		st, err := os.Stat(key)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o600 {
			t.Errorf("%s: key mode %v, want 0600", c.name, st.Mode().Perm())
		}
		if _, err := tls.LoadX509KeyPair(cert, key); err != nil {
			t.Errorf("%s: the pair does not load: %v", c.name, err)
		}
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file %s left", e.Name())
		}
	}
}

// TestTLSCertNeedsAHost: a host list that names no host (a certificate
// without names, which every client refuses) is refused before anything
// is written.
func TestTLSCertNeedsAHost(t *testing.T) {
	dir := t.TempDir()
	cert, key := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	for _, hosts := range []string{"", ",", " , ,", "  "} {
		_, _, err := runHLM(t, "tls-cert", "--host", hosts, "--cert", cert, "--key", key)
		var ue usageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), "names no host") {
			t.Errorf("--host %q: %v, want a usage error saying it names no host", hosts, err)
		}
		if _, err := os.Stat(key); err == nil {
			t.Fatalf("--host %q: %s written", hosts, key)
		}
	}
	if _, stderr, err := runHLM(t, "tls-cert", "--host", " server.example.org, ,10.0.0.5,", "--cert", cert, "--key", key); err != nil || !strings.Contains(stderr, "for server.example.org,10.0.0.5,") {
		t.Errorf("blanks among the hosts: %v, %q", err, stderr)
	}
}

// writeCertPair writes a self-signed certificate for 127.0.0.1, valid from
// notBefore to notAfter, and its key into dir.
func writeCertPair(t *testing.T, dir string, notBefore, notAfter time.Time) (cert, key string) {
	t.Helper()
	c, k, err := selfSigned([]string{"127.0.0.1"}, notBefore, notAfter)
	if err != nil {
		t.Fatal(err)
	}
	cert, key = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(cert, c, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(key, k, 0o600); err != nil {
		t.Fatal(err)
	}
	return cert, key
}

// TestServeRefusesCertOutsideDates: hlm serve does not start with a
// certificate that has expired or is not yet valid (every device would
// refuse it), says which dates and how to make a new one, and does so
// before the model loads.
func TestServeRefusesCertOutsideDates(t *testing.T) {
	now := time.Now()
	for _, c := range []struct {
		name     string
		from, to time.Time
		want     []string
	}{
		{"expired", now.AddDate(0, 0, -30), now.AddDate(0, 0, -1), []string{"expired on " + now.AddDate(0, 0, -1).UTC().Format(time.DateOnly), "hlm tls-cert"}},
		{"not yet valid", now.AddDate(0, 0, 1), now.AddDate(0, 0, 30), []string{"not valid before " + now.AddDate(0, 0, 1).UTC().Format(time.DateOnly), "clock", "hlm tls-cert"}},
	} {
		cert, key := writeCertPair(t, t.TempDir(), c.from, c.to)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		var out, errb lockedBuffer
		err := commands["serve"].run(ctx, []string{"--listen", "127.0.0.1:0", "--tls-cert", cert, "--tls-key", key}, &out, &errb)
		cancel()
		if err == nil {
			t.Errorf("%s: served (%q)", c.name, errb.String())
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %v, want it to say %q", c.name, err, w)
			}
		}
		if strings.Contains(errb.String(), "listening") {
			t.Errorf("%s: started listening: %q", c.name, errb.String())
		}
	}
	// A certificate from hlm tls-cert loads now, and not after its --days.
	dir := t.TempDir()
	cert, key := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if _, _, err := runHLM(t, "tls-cert", "--days", "30", "--cert", cert, "--key", key); err != nil {
		t.Fatal(err)
	}
	if _, err := loadServeCert(cert, key, now); err != nil {
		t.Errorf("a new certificate: %v", err)
	}
	if _, err := loadServeCert(cert, key, now.AddDate(0, 0, 31)); err == nil || !strings.Contains(err.Error(), "expired") {
		t.Errorf("31 days on: %v, want it expired", err)
	}
}

// TestTLSHint: each TLS error a device commonly meets gets the flag to
// change, and stays the same error underneath (errors.Is/As).
func TestTLSHint(t *testing.T) {
	other := errors.New("connection refused")
	for _, c := range []struct {
		name string
		err  error
		want string // "": no hint
	}{
		{"unknown authority", fmt.Errorf("dial 10.0.0.5:7140: tls: failed to verify certificate: %w", x509.UnknownAuthorityError{}), "pass --tls-ca CERT.pem"},
		{"server closed at the handshake", fmt.Errorf("dial: %w", edge.ErrClosedAtHandshake), "connect with --tls"},
		{"server speaks no TLS", fmt.Errorf("dial: %w", edge.ErrNotTLS), "connect without --tls"},
		{"something else", other, ""},
		{"no error", nil, ""},
	} {
		got := tlsHint(c.err)
		if c.want == "" {
			if got != c.err {
				t.Errorf("%s: %v, want the error unchanged", c.name, got)
			}
			continue
		}
		if got == nil || !strings.Contains(got.Error(), c.want) || !errors.Is(got, c.err) {
			t.Errorf("%s: %v, want %q added to the same error", c.name, got, c.want)
		}
	}
	var ue x509.UnknownAuthorityError
	if !errors.As(tlsHint(fmt.Errorf("dial: %w", x509.UnknownAuthorityError{})), &ue) {
		t.Error("the hint hides the unknown-authority error")
	}
}
