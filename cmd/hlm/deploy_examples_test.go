package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// docSection is the text of docs/deploy.md's section "## N. …".
func docSection(t *testing.T, doc string, n int) string {
	t.Helper()
	start := strings.Index(doc, fmt.Sprintf("\n## %d. ", n))
	if start < 0 {
		t.Fatalf("docs/deploy.md has no section %d", n)
	}
	rest := doc[start+1:]
	if end := strings.Index(rest, "\n## "); end >= 0 {
		rest = rest[:end]
	}
	return rest
}

// shellLines are the command lines of a section's ```sh blocks, with
// continuation lines joined and comments dropped.
func shellLines(section string) []string {
	var out []string
	for _, block := range strings.Split(section, "```sh\n")[1:] {
		block, _, _ = strings.Cut(block, "```")
		block = strings.ReplaceAll(block, "\\\n", " ")
		for _, l := range strings.Split(block, "\n") {
			if i := strings.Index(l, " # "); i >= 0 {
				l = l[:i]
			}
			if l = strings.TrimSpace(l); l != "" {
				out = append(out, l)
			}
		}
	}
	return out
}

// shellWords splits a command line as sh would for the documented
// commands: words, single and double quotes.
func shellWords(line string) []string {
	var words []string
	var w strings.Builder
	in, quote := false, rune(0)
	for _, r := range line {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			w.WriteRune(r)
		case r == '\'' || r == '"':
			quote, in = r, true
		case r == ' ' || r == '\t':
			if in {
				words = append(words, w.String())
				w.Reset()
				in = false
			}
		default:
			w.WriteRune(r)
			in = true
		}
	}
	if in {
		words = append(words, w.String())
	}
	return words
}

// hlmCommand finds the ./hlm command of lines whose subcommand is sub
// (and, when given, which contains must) and returns its arguments.
func hlmCommand(t *testing.T, lines []string, sub, must string) []string {
	t.Helper()
	for _, l := range lines {
		w := shellWords(l)
		if len(w) > 1 && w[0] == "./hlm" && w[1] == sub && strings.Contains(l, must) {
			return w[1:]
		}
	}
	t.Fatalf("no ./hlm %s command (with %q) in %q", sub, must, lines)
	return nil
}

// freeAddr is a loopback address nothing listens on now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// replaceArgs substitutes every occurrence of the keys in the arguments.
func replaceArgs(args []string, subst map[string]string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		for from, to := range subst {
			a = strings.ReplaceAll(a, from, to)
		}
		out[i] = a
	}
	return out
}

// lockedBuffer is a bytes.Buffer safe to write from a command's
// goroutines while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// background runs an hlm command until the test ends; its output is kept.
func background(t *testing.T, args []string) *lockedBuffer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var out lockedBuffer
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := commands[args[0]].run(ctx, args[1:], &out, &out); err != nil && ctx.Err() == nil {
			fmt.Fprintf(&out, "\n(exited: %v)", err)
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return &out
}

// waitListening waits until addr accepts connections.
func waitListening(t *testing.T, addr string, out *lockedBuffer) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return
		}
	}
	t.Fatalf("nothing listens on %s; output:\n%s", addr, out.String())
}

// summaryLine matches the run summary's upload counts.
var summaryLine = regexp.MustCompile(`uploads (\d+) \(TR ([0-9.]+)\)`)

// checkGeneration: a documented generation produced text, consulted the
// server and printed no warning.
func checkGeneration(t *testing.T, name, stdout, stderr string) {
	t.Helper()
	all := stdout + stderr
	m := summaryLine.FindStringSubmatch(all)
	switch {
	case m == nil:
		t.Errorf("%s printed no summary:\n%s", name, all)
	case m[1] == "0":
		t.Errorf("%s never consulted the server (uploads 0):\n%s", name, all)
	case strings.Contains(all, "warning:"):
		t.Errorf("%s warned:\n%s", name, all)
	}
	words := strings.Fields(stdout)
	distinct := map[string]bool{}
	for _, w := range words {
		distinct[w] = true
	}
	if len(words) < 10 || len(distinct) < len(words)/4 {
		t.Errorf("%s's text is not sensible (%d words, %d distinct): %q", name, len(words), len(distinct), stdout)
	}
}

// TestDeployDocExamples runs docs/deploy.md's server, device, OpenAI and
// two-terminal commands as written, on loopback: only the host names, the
// ports and the certificate's host list are replaced. Each device command
// must generate sensible text that consulted the server, without a warning
// (the device example once printed "time time time …" without a single
// upload).
func TestDeployDocExamples(t *testing.T) {
	raw, err := os.ReadFile("../../docs/deploy.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	dir := t.TempDir()
	t.Chdir(dir)
	t.Setenv("HLM_AUTH_TOKEN", "0123456789abcdef")
	serverAddr, metricsAddr := freeAddr(t), freeAddr(t)
	subst := map[string]string{
		"server.example.org,10.0.0.5": "127.0.0.1",
		"server.example.org:7140":     serverAddr,
		"0.0.0.0:7140":                serverAddr,
		"127.0.0.1:9140":              metricsAddr,
	}

	s3 := shellLines(docSection(t, doc, 3))
	cert := replaceArgs(hlmCommand(t, s3, "tls-cert", ""), subst)
	if _, stderr, err := runHLM(t, cert...); err != nil {
		t.Fatalf("%v: %v\n%s", cert, err, stderr)
	}
	serve := replaceArgs(hlmCommand(t, s3, "serve", ""), subst)
	out := background(t, serve)
	waitListening(t, serverAddr, out)

	s4 := shellLines(docSection(t, doc, 4))
	edgeArgs := replaceArgs(hlmCommand(t, s4, "edge", ""), subst)
	stdout, stderr, err := runHLM(t, edgeArgs...)
	if err != nil {
		t.Fatalf("%v: %v\n%s", edgeArgs, err, stderr)
	}
	checkGeneration(t, "section 4's device", stdout, stderr)

	// Section 5: the OpenAI endpoint and the two requests.
	s5 := shellLines(docSection(t, doc, 5))
	openaiAddr := freeAddr(t)
	subst5 := map[string]string{"server.example.org:7140": serverAddr, "127.0.0.1:8080": openaiAddr}
	out5 := background(t, replaceArgs(hlmCommand(t, s5, "edge", "--openai"), subst5))
	waitListening(t, openaiAddr, out5)
	for _, l := range s5 {
		w := replaceArgs(shellWords(l), subst5)
		if w[0] != "curl" {
			continue
		}
		var url, body string
		for i := 1; i < len(w); i++ {
			switch {
			case w[i] == "-d" && i+1 < len(w):
				body = w[i+1]
				i++
			case strings.HasPrefix(w[i], "http://"):
				url = w[i]
			}
		}
		resp, err := http.Post(url, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatalf("%s: %v", l, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !bytes.Contains(b, []byte(`"finish_reason"`)) {
			t.Errorf("%s: HTTP %d %s", l, resp.StatusCode, b)
		}
		if !strings.Contains(body, `"stream":true`) {
			var r struct {
				Choices []struct{ Text string } `json:"choices"`
			}
			if json.Unmarshal(b, &r) != nil || len(r.Choices) != 1 || len(strings.Fields(r.Choices[0].Text)) < 5 {
				t.Errorf("%s: no text in %s", l, b)
			}
		}
	}

	// Section 6: the defaults need no other flags — when the default port
	// is free here.
	s6 := shellLines(docSection(t, doc, 6))
	if c, err := net.Listen("tcp", "127.0.0.1:7140"); err != nil {
		t.Logf("section 6 not run: 127.0.0.1:7140 is taken here (%v)", err)
	} else {
		c.Close()
		t.Setenv("HLM_AUTH_TOKEN", "")
		out6 := background(t, hlmCommand(t, s6, "serve", ""))
		waitListening(t, "127.0.0.1:7140", out6)
		stdout, stderr, err := runHLM(t, hlmCommand(t, s6, "edge", "")...)
		if err != nil {
			t.Fatalf("section 6's device: %v\n%s", err, stderr)
		}
		checkGeneration(t, "section 6's device", stdout, stderr)
	}
}

// TestEdgeFindsTheDraftOfAQuantizedServer: hlm edge without --slm against
// an hlm serve of a quantized copy (builtin:stories260K@q8) opens the
// draft hlm ships for the model the copy was made from, named by the
// Welcome's origin.
func TestEdgeFindsTheDraftOfAQuantizedServer(t *testing.T) {
	addr := freeAddr(t)
	out := background(t, []string{"serve", "--listen", addr, "--llm", "builtin:stories260K@q8"})
	waitListening(t, addr, out)
	stdout, stderr, err := runHLM(t, "edge", "--server", addr, "--method", "q-s", "--prompt", "Once upon a time", "--max-tokens", "24")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	checkGeneration(t, "edge against a Q8_0 server", stdout, stderr)
	// The summary names the draft it found (new-user walk: edge did not
	// say which), and so does --json.
	if !strings.Contains(stderr, "draft: SLM builtin:stories260K-draft") {
		t.Errorf("edge's summary does not name its draft:\n%s", stderr)
	}
	js, _, err := runHLM(t, "edge", "--server", addr, "--method", "q-s", "--prompt", "Once", "--max-tokens", "4", "--json")
	if err != nil || !strings.Contains(js, `"slm":"builtin:stories260K-draft"`) {
		t.Errorf("edge --json (%v) does not name its draft:\n%s", err, js)
	}
}
