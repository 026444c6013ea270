package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hlmproject/hlm/cloud"
	"github.com/hlmproject/hlm/edge"
	"github.com/hlmproject/hlm/hybrid"
	"github.com/hlmproject/hlm/internal/refs"
	"github.com/hlmproject/hlm/model"
	"github.com/hlmproject/hlm/model/builtin"
	"github.com/hlmproject/hlm/model/llama"
	"github.com/hlmproject/hlm/openai"
	"github.com/hlmproject/hlm/wire"
)

// TestOpenAIEndToEnd runs the whole stack — hlm serve's server, the edge
// generator and the OpenAI-compatible handler — and drives it with stock
// curl through openai/testdata/curl_test.sh (streaming included).
func TestOpenAIEndToEnd(t *testing.T) {
	for _, tool := range []string{"curl", "bash"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not on PATH", tool)
		}
	}
	p := hybrid.DefaultParams()
	p.Method, p.MaxTokens = hybrid.QS, 24
	api, _ := openaiStack(t, p)
	cmd := exec.Command("bash", "../../openai/testdata/curl_test.sh", api)
	out, err := cmd.CombinedOutput()
	t.Logf("curl_test.sh:\n%s", out)
	if err != nil {
		t.Fatalf("curl script failed: %v", err)
	}
}

// loopbackServer runs an hlm serve server of llm on a loopback port until
// the test ends (wrap, when set, wraps the listener: TLS) and returns its
// address.
func loopbackServer(t *testing.T, llm model.Model, wrap func(net.Listener) net.Listener) string {
	t.Helper()
	srv, err := cloud.New(cloud.Config{LLM: llm})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := net.Listener(ln)
	if wrap != nil {
		l = wrap(ln)
	}
	go srv.Serve(context.Background(), l)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	})
	return ln.Addr().String()
}

// openaiStack runs the whole stack — hlm serve's server of the built-in
// LLM, an edge generator with its untrained early exit (p) and the
// OpenAI-compatible handler on a loopback HTTP server — until the test
// ends; it returns the API's URL and the generator.
func openaiStack(t *testing.T, p hybrid.Params) (string, *edge.Generator) {
	t.Helper()
	return openaiStackOf(t, builtin.DefaultLLM, builtin.DefaultLLM+"@exit=2", "", p)
}

// openaiStackOf is openaiStack with the server's LLM and the device's
// draft opened from these specs, and chats formatted by the template file
// tmpl ("": the model's, or the plain format).
func openaiStackOf(t *testing.T, llmSpec, slmSpec, tmpl string, p hybrid.Params) (string, *edge.Generator) {
	t.Helper()
	llm, err := llama.OpenSpec(llmSpec, "")
	if err != nil {
		t.Fatal(err)
	}
	slm, err := llama.OpenSpec(slmSpec, "")
	if err != nil {
		t.Fatal(err)
	}
	g, err := edge.NewGenerator(edge.Config{Addr: loopbackServer(t, llm, nil)}, slm, p)
	if err != nil {
		t.Fatal(err)
	}
	f, err := newChatFormat(g.Tok, tmpl, nil)
	if err != nil {
		t.Fatal(err)
	}
	h, _, err := newOpenAIAPI(g, f, openai.Options{MaxConcurrent: 4})
	if err != nil {
		t.Fatal(err)
	}
	api := httptest.NewServer(h)
	t.Cleanup(api.Close)
	return api.URL, g
}

// TestOpenAIContextPolicy drives the endpoint with OpenAI's official Node
// client (internal/refs/fetch.sh installs it): a prompt past the context is
// a 400 context_length_exceeded naming the prompt or the messages; a
// prompt that fits with max_tokens past the context stops at the context
// with finish_reason "length" and a usage of the tokens the model saw (the
// endpoint once cut such prompts silently and reported the uncut count,
// and answered a max_tokens past the context with 500).
func TestOpenAIContextPolicy(t *testing.T) {
	node := refs.Node(t)
	sdk := refs.Package(t, "openai")
	p := hybrid.DefaultParams()
	p.Method = hybrid.QS
	api, g := openaiStack(t, p)
	short := len(g.Tok.Encode("Once upon a time", true))
	out, err := exec.Command(node, "testdata/openai_context.cjs", sdk, api+"/v1", strconv.Itoa(g.SLM.Config().SeqLen), strconv.Itoa(short)).CombinedOutput()
	t.Logf("openai_context.cjs:\n%s", out)
	if err != nil {
		t.Fatalf("the official client's checks failed: %v", err)
	}
}

// TestVerifierReady: the endpoint's /healthz probe succeeds against a
// running hlm serve and fails, naming the address, when nothing listens.
func TestVerifierReady(t *testing.T) {
	llm, err := llama.OpenSpec(builtin.DefaultLLM, "")
	if err != nil {
		t.Fatal(err)
	}
	addr := loopbackServer(t, llm, nil)
	if err := verifierReady(edge.Config{Addr: addr})(context.Background()); err != nil {
		t.Errorf("a running server: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gone := ln.Addr().String()
	ln.Close()
	if err := verifierReady(edge.Config{Addr: gone})(context.Background()); err == nil || !strings.Contains(err.Error(), gone) {
		t.Errorf("nothing listening: %v; want an error naming %s", err, gone)
	}
}

// chatMessage is a chat message as OpenAI's API sends it.
type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// chatTurn posts msgs to the chat endpoint at api and returns the answer,
// the prompt tokens and those of them reported cached.
func chatTurn(t *testing.T, api string, msgs []chatMessage) (string, int, int) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"messages": msgs, "seed": 1})
	resp, err := http.Post(api+"/v1/chat/completions", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r struct {
		Choices []struct {
			Message chatMessage `json:"message"`
		} `json:"choices"`
		Usage struct {
			PromptTokens int `json:"prompt_tokens"`
			Details      struct {
				CachedTokens int `json:"cached_tokens"`
			} `json:"prompt_tokens_details"`
		} `json:"usage"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || resp.StatusCode != 200 || len(r.Choices) != 1 {
		t.Fatalf("status %d, %+v, %v", resp.StatusCode, r, err)
	}
	return r.Choices[0].Message.Content, r.Usage.PromptTokens, r.Usage.Details.CachedTokens
}

// conversationStack is openaiStack (q-s, 16 tokens) with Conversations,
// and a chat's first message.
func conversationStack(t *testing.T) (string, *edge.Generator, []chatMessage) {
	t.Helper()
	p := hybrid.DefaultParams()
	p.Method, p.MaxTokens = hybrid.QS, 16
	api, g := openaiStack(t, p)
	g.Conversations = &edge.Conversations{}
	return api, g, []chatMessage{{"user", "Tell me a story about a little dog who found a red ball in the park"}}
}

// TestOpenAIConversation: a chat's second request, which repeats the
// first with its answer and adds a message, continues the first's session
// and reports the prompt tokens it kept as cached; a request of another
// conversation, which shares only the format's opening with it, starts
// anew.
func TestOpenAIConversation(t *testing.T) {
	api, _, first := conversationStack(t)
	answer, n1, cached := chatTurn(t, api, first)
	if cached != 0 {
		t.Fatalf("the first request reports %d cached tokens", cached)
	}
	second := append(first, chatMessage{"assistant", answer}, chatMessage{"user", "What happened next?"})
	_, n2, cached := chatTurn(t, api, second)
	t.Logf("first request: %d prompt tokens; second: %d, of which %d cached", n1, n2, cached)
	if cached < n1 || cached >= n2 {
		t.Errorf("the second request (%d prompt tokens) kept %d, want at least the first's %d", n2, cached, n1)
	}
	if _, _, cached := chatTurn(t, api, []chatMessage{{"user", "Why is the sky blue?"}}); cached != 0 {
		t.Errorf("another conversation kept %d tokens of this one", cached)
	}
}

// TestOpenAIConversationTemplates: with the chat templates of real model
// families (llama.cpp's copies; a tiny random-weight model, whose answers
// are garbage that need not tokenize back the same), each request of a
// conversation keeps at least the whole of the last one's prompt.
func TestOpenAIConversationTemplates(t *testing.T) {
	dir := filepath.Join(refs.LlamaCpp(t), "models", "templates")
	m := filepath.Join("..", "..", "model", "llama", "testdata", "families", "qwen3.gguf")
	// The model's context is 256 tokens: templates that fit three turns in it.
	for _, tmpl := range []string{"Qwen-Qwen3-0.6B.jinja", "google-gemma-2-2b-it.jinja", "microsoft-Phi-3.5-mini-instruct.jinja", "mistralai-Mistral-Nemo-Instruct-2407.jinja"} {
		t.Run(tmpl, func(t *testing.T) {
			p := hybrid.DefaultParams()
			p.Method, p.MaxTokens = hybrid.QS, 12
			api, g := openaiStackOf(t, m, m+"@exit=1", filepath.Join(dir, tmpl), p)
			g.Conversations = &edge.Conversations{}
			msgs := []chatMessage{{"user", "A story?"}}
			var last int
			for turn := 1; turn <= 3; turn++ {
				answer, n, cached := chatTurn(t, api, msgs)
				t.Logf("turn %d: %d prompt tokens, %d cached", turn, n, cached)
				if turn > 1 && cached < last {
					t.Errorf("turn %d kept %d tokens, want at least the last turn's prompt (%d)", turn, cached, last)
				}
				last = n
				msgs = append(msgs, chatMessage{"assistant", answer}, chatMessage{"user", "Then?"})
			}
		})
	}
}

// losingSession ends its session on the server before its first upload,
// as a restart of hlm serve does: the upload reconnects, the resume is
// refused, and the generation reopens a new session with its whole
// committed prefix.
type losingSession struct {
	r    *edge.Remote
	lost bool
}

func (v *losingSession) Verify(ctx context.Context, up *wire.Upload) (*wire.Verdict, error) {
	if !v.lost {
		v.lost = true
		v.r.Close()
	}
	return v.r.Verify(ctx, up)
}

// TestOpenAICachedAfterReopen: a turn that continued its parked session
// but lost it before the end (hlm serve restarted) sent its whole prompt
// again, and the server evaluated it again: none of it is reported cached
// (it once reported the tokens the continuation had kept).
func TestOpenAICachedAfterReopen(t *testing.T) {
	api, g, first := conversationStack(t)
	answer, _, _ := chatTurn(t, api, first)
	var lost []*losingSession
	g.Wrap = func(r *edge.Remote) hybrid.Verifier {
		v := &losingSession{r: r}
		lost = append(lost, v)
		return v
	}
	second := append(first, chatMessage{"assistant", answer}, chatMessage{"user", "What happened next?"})
	_, n2, cached := chatTurn(t, api, second)
	if len(lost) != 1 || !lost[0].lost {
		t.Fatal("the second turn's session was not lost: the test tests nothing")
	}
	if cached != 0 {
		t.Errorf("the second turn, reopened with its whole prompt (%d tokens), reports %d cached", n2, cached)
	}
}

// TestRequestField: a refusal of the parameters an OpenAI request sets
// names its field (OpenAI's "param"); one of a parameter the request does
// not set (the method's, from hlm edge's flags) names none.
func TestRequestField(t *testing.T) {
	for _, c := range []struct {
		set  func(p *hybrid.Params)
		want string
	}{
		{func(p *hybrid.Params) { p.TopK = -1 }, "top_k"},
		{func(p *hybrid.Params) { p.TopP = 2 }, "top_p"},
		{func(p *hybrid.Params) { p.Temperature = -1 }, "temperature"},
		{func(p *hybrid.Params) { p.MaxTokens = hybrid.MaxTokensLimit + 1 }, "max_tokens"},
		{func(p *hybrid.Params) { p.LMin, p.LMax = 4, 2 }, ""},
	} {
		p := hybrid.DefaultParams()
		c.set(&p)
		err := p.Validate()
		if err == nil {
			t.Fatalf("%+v validated", p)
		}
		if got := requestField(err); got != c.want {
			t.Errorf("%v: field %q, want %q", err, got, c.want)
		}
	}
}
