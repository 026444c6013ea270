package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"time"

	"github.com/hlmproject/hlm/edge"
	"github.com/hlmproject/hlm/hybrid"
	"github.com/hlmproject/hlm/internal/words"
	"github.com/hlmproject/hlm/live"
	"github.com/hlmproject/hlm/model"
	"github.com/hlmproject/hlm/model/builtin"
	"github.com/hlmproject/hlm/model/llama"
	"github.com/hlmproject/hlm/tensor"
)

func init() {
	register("edge", "run the device: the SLM drafts and a remote hlm serve verifies", runEdge)
}

// edgeHelp is the --help text of hlm edge.
const edgeHelp = `
Run the device side against an hlm serve: draft with the SLM, decide what to
send with the method's policies and codecs, and send real bytes. The same
method parameters as hlm sim apply (--set key=value; see hlm sim --help);
with --json the summary is the same object hlm sim prints, virtual figures
(from the channel model) and wall-clock figures both. --shape imposes the
channel model's rate and delay on the real connection. A dropped connection
is re-established and the session resumed without losing tokens. With no
flags it connects to hlm serve's default address, 127.0.0.1:7140, and drafts
with the draft hlm ships for the server's LLM. With --openai it serves an
OpenAI-compatible API instead, and a chat's next request continues the
session of its last one, sending only the new tokens
(--openai-conversations; docs/deploy.md, section 5).`

func runEdge(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return tlsHint(edgeMain(ctx, args, stdout, stderr))
}

// tlsHint adds to a handshake error that usually means that the device and
// the server disagree on TLS what to change.
func tlsHint(err error) error {
	var unknownCA x509.UnknownAuthorityError
	switch {
	case errors.As(err, &unknownCA):
		return fmt.Errorf("%w: the server's certificate is not signed by a CA this machine trusts; for a certificate from hlm tls-cert pass --tls-ca CERT.pem (the file the server's --tls-cert names)", err)
	case errors.Is(err, edge.ErrClosedAtHandshake):
		return fmt.Errorf("%w: if the server runs with --tls-cert, connect with --tls (and --tls-ca CERT.pem to trust a certificate from hlm tls-cert)", err)
	case errors.Is(err, edge.ErrNotTLS):
		return fmt.Errorf("%w: connect without --tls, --tls-ca and --tls-insecure, or serve with --tls-cert and --tls-key", err)
	}
	return err
}

func edgeMain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	p := hybrid.DefaultParams()
	fs := newFlags("edge", "[--server ADDR] [--slm SPEC] [--method NAME] [--prompt TEXT | --prompts FILE | --openai ADDR] [--set key=value ...] [--json] [--ui ADDR]", edgeHelp, stdout)
	f := addEdgeFlags(fs)
	slmSpec := addDraftFlag(fs)
	vars := chatVars{}
	fs.Var(vars, "chat-var", "with --openai: chat template variable KEY=VALUE (repeatable; e.g. enable_thinking=false)")
	rf := addRunFlags(fs, p, "parameter override key=value (repeatable; see hlm sim --help)")
	uf := addUIFlags(fs, false)
	if err := parse(fs, args); err != nil {
		return err
	}
	if *f.openaiAddr != "" {
		switch {
		case *uf.addr != "":
			return usageError{errors.New("--ui shows the generations of --prompt/--prompts, not of --openai")}
		case *rf.prompt != "" || *rf.prompts != "":
			return usageError{errors.New("--openai serves the prompts of its clients: drop --prompt/--prompts (or run them without --openai)")}
		case *rf.asJSON:
			return usageError{errors.New("--json prints the summary of --prompt/--prompts; --openai answers in JSON to its clients")}
		}
	} else if *f.openaiMax != defaultOpenAIConcurrency {
		return usageError{errors.New("--openai-concurrency limits the generations of --openai")}
	} else if *f.openaiConv != defaultOpenAIConversations || *f.openaiDrafts != defaultOpenAIDraftSessions || *f.openaiConvAge != defaultOpenAIConversationAge {
		return usageError{errors.New("--openai-conversations, --openai-conversation-age and --openai-draft-sessions keep the sessions of --openai's requests for their conversations' next turns")}
	}
	if *f.openaiMax < 1 {
		return usageError{fmt.Errorf("--openai-concurrency %d: want at least 1", *f.openaiMax)}
	}
	if *f.openaiConv < 0 {
		return usageError{fmt.Errorf("--openai-conversations %d: want 0 (close every session) or more", *f.openaiConv)}
	}
	if *f.openaiConvAge <= 0 {
		return usageError{fmt.Errorf("--openai-conversation-age %v: want a positive duration (at most hlm serve's --idle-timeout)", *f.openaiConvAge)}
	}
	if *f.openaiDrafts < 0 {
		return usageError{fmt.Errorf("--openai-draft-sessions %d: want 0 (keep none) or more", *f.openaiDrafts)}
	}
	p, err := rf.params(p)
	if err != nil {
		return err
	}
	for _, u := range unusedSets("--set", rf.sets, p) {
		fmt.Fprintf(stderr, "warning: %s\n", u)
	}
	if *f.token == "" {
		*f.token = os.Getenv("HLM_AUTH_TOKEN")
	}
	log, err := newLogger(stderr, *f.logFormat, *f.logLevel)
	if err != nil {
		return err
	}
	conn, err := f.conn(p, log)
	if err != nil {
		return err
	}
	tensor.SetThreads(*f.threads)
	slm, err := openEdgeDraft(ctx, conn, *slmSpec, *f.tok)
	if err != nil {
		return err
	}
	g, err := edge.NewGenerator(conn, slm, p)
	if err != nil {
		return err
	}
	g.LLM = *f.llmFP
	trace, closeTrace, err := rf.openTrace()
	if err != nil {
		return err
	}
	defer closeTrace()
	g.Trace = trace
	if *f.openaiAddr != "" {
		cf, err := newChatFormat(g.Tok, *f.tmplFile, vars)
		if err != nil {
			return err
		}
		if *f.openaiConv > 0 {
			g.Conversations = &edge.Conversations{Max: *f.openaiConv, MaxAge: *f.openaiConvAge, MaxDrafts: *f.openaiDrafts}
			if *f.openaiDrafts == 0 {
				g.Conversations.MaxDrafts = -1 // none
			}
		}
		return serveOpenAI(ctx, g, cf, *f.openaiAddr, *f.openaiKey, *f.openaiMax, log, stderr)
	}
	if *f.tmplFile != "" || len(vars) > 0 {
		return usageError{errors.New("--chat-template and --chat-var format the chat completions of --openai")}
	}
	texts, err := rf.promptTexts()
	if err != nil {
		return err
	}
	view, err := uf.start("hlm edge → "+*f.server, stderr)
	if err != nil {
		return err
	}
	if *rf.asJSON && view == nil {
		g.TraceRuns = len(texts) > 1 // the trace says whose each line is
		sum, err := g.Run(ctx, texts, nil)
		if err != nil {
			return err
		}
		return json.NewEncoder(stdout).Encode(edgeJSON{sum, slm.Name()})
	}
	if view != nil {
		defer view.keep(ctx, stderr)
	}
	return streamPrompts(ctx, g, texts, view, trace, *rf.asJSON, stdout, stderr, slm.Name())
}

// edgeTLS is the TLS configuration of a connection to server: the system's
// roots, or caFile's certificate, or no verification at all (insecure).
func edgeTLS(server, caFile string, insecure bool) (*tls.Config, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: insecure}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, err
		}
		tc.RootCAs = x509.NewCertPool()
		if !tc.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%s: no PEM certificate", caFile)
		}
	}
	host, _, err := net.SplitHostPort(server)
	if err != nil {
		return nil, usageError{fmt.Errorf("--server %q: %v", server, err)}
	}
	tc.ServerName = host
	return tc, nil
}

// streamPrompts generates for each prompt (prompt i with
// hybrid.PromptParams), streaming its text to stdout as it is committed
// (and to the live view) with a summary on stderr, or, with asJSON, printing
// the aggregate as JSON at the end.
func streamPrompts(ctx context.Context, g *edge.Generator, texts []string, view *ui, trace io.Writer, asJSON bool, stdout, stderr io.Writer, slmName string) error {
	var runs []hybrid.Result
	for i, t := range texts {
		pp := hybrid.PromptParams(g.Params, i)
		var run *live.Run
		base := trace
		if base != nil && len(texts) > 1 { // say whose each line is, as hlm sim does
			base = hybrid.RunTrace(base, i+1)
		}
		g.Trace = base
		if view != nil {
			run, g.Trace = view.begin(ctx, pp, t, i, len(texts), g.Tok, base)
		}
		var onTokens func([]int)
		dec := g.Tok.NewStreamDecoder()
		if !asJSON {
			for _, id := range g.Tok.Encode(t, true) {
				dec.Push(id)
			}
			onTokens = func(toks []int) {
				for _, id := range toks {
					io.WriteString(stdout, dec.Push(id))
				}
			}
		}
		res, st, err := g.One(ctx, pp, t, onTokens)
		if run != nil {
			run.End(res, err)
		}
		if !asJSON {
			io.WriteString(stdout, dec.Flush()+"\n")
		}
		if err != nil {
			return err
		}
		runs = append(runs, res)
		if asJSON {
			continue
		}
		res.Text = "" // already streamed
		printSummary(stderr, &res)
		fmt.Fprintf(stderr, "  draft: SLM %s (the LLM is the server's)\n", slmName)
		if st.Reconnects > 0 {
			fmt.Fprintf(stderr, "  reconnected %s, re-sent %s\n", words.Times(st.Reconnects), words.Plural(st.Resent, "upload"))
		}
		if res.Stop == hybrid.StopInterrupted {
			break // the summary so far is printed; the prompts after it are not run
		}
	}
	if asJSON {
		return json.NewEncoder(stdout).Encode(edgeJSON{hybrid.Aggregate(runs), slmName})
	}
	if len(runs) > 1 { // and over all prompts, as hlm sim's summary
		agg := hybrid.Aggregate(runs).Result
		agg.Text = ""
		fmt.Fprintf(stderr, "\nall %d prompts:", len(runs))
		printSummary(stderr, &agg)
	}
	return nil
}

// edgeJSON is hlm edge's --json summary: hlm sim's, with the draft it ran
// (the LLM is the server's).
type edgeJSON struct {
	hybrid.Summary
	SLM string `json:"slm"`
}

// openEdgeDraft opens --slm, or by default the draft hlm ships for the
// server's LLM (found by the origin the server's Welcome names: a
// quantized copy of a model finds that model's draft).
func openEdgeDraft(ctx context.Context, conn edge.Config, spec, tok string) (model.Model, error) {
	if spec == "" {
		rem, err := edge.Dial(ctx, conn)
		if err != nil {
			return nil, fmt.Errorf("connecting to %s: %w", conn.Addr, err)
		}
		fp := rem.Welcome().Origin
		rem.Drop()
		var ok bool
		if spec, ok = builtin.DraftFor(fp); !ok {
			return nil, fmt.Errorf("hlm ships no draft for the server's LLM (the model it was made from: origin %.12s…, in hlm serve's \"serving\" log line): pass one with --slm, or train one with hlm distill --teacher LLM --out draft.gguf", fp)
		}
	}
	return llama.OpenSpec(spec, tok)
}

// edgeFlags are hlm edge's own flags (addRunFlags and addUIFlags add the shared ones).
type edgeFlags struct {
	server, tok, token, caFile, llmFP, openaiAddr, openaiKey, tmplFile, logFormat, logLevel *string
	useTLS, insecure, shape                                                                 *bool
	threads, openaiMax, openaiConv, openaiDrafts                                            *int
	openaiConvAge                                                                           *time.Duration
}

// defaultOpenAIConcurrency is --openai-concurrency's default.
const defaultOpenAIConcurrency = 4

// defaultOpenAIConversations is --openai-conversations's default.
const defaultOpenAIConversations = 16

// defaultOpenAIDraftSessions is --openai-draft-sessions's default.
const defaultOpenAIDraftSessions = 2

// defaultOpenAIConversationAge is --openai-conversation-age's default:
// inside hlm serve's default idle timeout (5 minutes).
const defaultOpenAIConversationAge = 4 * time.Minute

// addEdgeFlags declares them.
func addEdgeFlags(fs *flag.FlagSet) *edgeFlags {
	return &edgeFlags{
		server:        fs.String("server", "127.0.0.1:7140", "server address"),
		tok:           fs.String("tokenizer", "", "tokenizer file, when not found with the model"),
		token:         fs.String("auth-token", "", "token for the server (default: $HLM_AUTH_TOKEN)"),
		useTLS:        fs.Bool("tls", false, "connect with TLS"),
		caFile:        fs.String("tls-ca", "", "trust this CA certificate (PEM), e.g. the one hlm tls-cert wrote; implies --tls"),
		insecure:      fs.Bool("tls-insecure", false, "do not verify the server certificate (testing only); implies --tls"),
		shape:         fs.Bool("shape", false, "impose the channel model's rate and delay on the real connection"),
		llmFP:         fs.String("llm-fingerprint", "", "refuse servers whose LLM has another fingerprint"),
		openaiAddr:    fs.String("openai", "", "serve an OpenAI-compatible API on this address instead of one prompt"),
		openaiKey:     fs.String("openai-key", "", "require this bearer token on the OpenAI API"),
		openaiMax:     fs.Int("openai-concurrency", defaultOpenAIConcurrency, "with --openai: generations at once; one more gets 429 with Retry-After (each holds a session on the server and a draft on this device)"),
		openaiConv:    fs.Int("openai-conversations", defaultOpenAIConversations, "with --openai: sessions left on hlm serve after a request (parked), so that a conversation's next request, whose prompt begins with the last one's tokens, sends and evaluates only its new tokens; 0: close every session"),
		openaiConvAge: fs.Duration("openai-conversation-age", defaultOpenAIConversationAge, "with --openai: how long after its turn a parked session is tried (keep it below hlm serve's --idle-timeout, after which the server has dropped it)"),
		openaiDrafts:  fs.Int("openai-draft-sessions", defaultOpenAIDraftSessions, "with --openai: of the parked sessions, how many of the newest keep the draft model's cache on this device too, so that their next turn is not evaluated here again either (each holds the draft's KV cache for its conversation); 0: none"),
		tmplFile:      fs.String("chat-template", "", "with --openai: format chat completions with this Jinja template instead of the model's"),
		threads:       threadsFlag(fs, "worker threads for the draft model (0: all cores)"),
		logFormat:     fs.String("log-format", "text", "log format: text or json"),
		logLevel:      fs.String("log-level", "warn", "log level: debug, info, warn, error"),
	}
}

// conn is the connection to the server the flags describe: TLS when asked
// for, the link shaped as p's channel with --shape.
func (f *edgeFlags) conn(p hybrid.Params, log *slog.Logger) (edge.Config, error) {
	conn := edge.Config{Addr: *f.server, Token: *f.token, Logger: log}
	if *f.useTLS || *f.caFile != "" || *f.insecure {
		var err error
		if conn.TLS, err = edgeTLS(*f.server, *f.caFile, *f.insecure); err != nil {
			return conn, err
		}
	}
	if *f.shape {
		c := p.Channel
		conn.Shape = &c
	}
	return conn, nil
}
