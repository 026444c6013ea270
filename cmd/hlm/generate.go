package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode"

	"github.com/hlmproject/hlm/chat"
	"github.com/hlmproject/hlm/generate"
	"github.com/hlmproject/hlm/model/builtin"
	"github.com/hlmproject/hlm/tensor"
)

func init() {
	register("generate", "sample text from one model (the LLM-only / SLM-only baseline)", runGenerate)
}

// generateHelp is the --help text of hlm generate.
const generateHelp = `
Generate a continuation of a prompt (--prompt TEXT, or -f FILE) with one
model (default the built-in stories260K). The continuation (not the prompt)
streams to stdout; the summary goes to stderr. --temperature 0 is greedy
decoding. Generation ends at the tokenizer's end-of-generation tokens
(EOS and the end-of-turn tokens of its chat format).

With --chat the prompt is a user message (after --system's message, if any),
or --messages is a whole conversation (a JSON array of {"role", "content"}),
formatted with the model's chat template (see hlm chat-template), and the
reply streams.`

func runGenerate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg := generate.DefaultConfig()
	fs := newFlags("generate", "[--model SPEC] [--prompt TEXT | -f FILE] [flags] | --chat (--prompt TEXT [--system TEXT] | --messages FILE)", generateHelp, stdout)
	fs.StringVar(&cfg.Model, "model", builtin.DefaultLLM, "model spec: a llama2.c .bin, a .gguf, a Hugging Face directory or builtin:NAME, optionally with @exit=N, @q8, @q4, @ctk=f16@ctv=f16 (a half-precision KV cache) or @ctk=q8_0@ctv=q8_0 (a Q8_0 one); PATH.gguf@llama.cpp runs it on llama.cpp's library")
	fs.StringVar(&cfg.Tokenizer, "tokenizer", "", "tokenizer file (tokenizer.json or llama2.c tokenizer.bin); default: found with the model")
	fs.StringVar(&cfg.Prompt, "prompt", "", "text to continue")
	promptFile := fs.String("f", "", "read the prompt from `FILE` (as llama.cpp's -f: one final newline dropped)")
	fs.StringVar(promptFile, "file", "", "same as -f")
	alias(fs, "m", "model")
	alias(fs, "p", "prompt")
	fs.Float64Var(&cfg.Sampler.Temperature, "temperature", cfg.Sampler.Temperature, "sampling temperature (0: greedy)")
	fs.IntVar(&cfg.Sampler.TopK, "top-k", 0, "keep only the K most probable tokens (0: off)")
	fs.Float64Var(&cfg.Sampler.TopP, "top-p", 0, "nucleus sampling mass (0 or 1: off)")
	fs.IntVar(&cfg.MaxTokens, "max-tokens", defaultMaxTokens, "maximum number of new tokens (-1: no limit, until the end of generation or a full context, as llama.cpp's -n -1)")
	fs.Uint64Var(&cfg.Seed, "seed", defaultSeed, "random seed (the same seed gives the same text)")
	alias(fs, "n", "max-tokens")
	alias(fs, "s", "seed")
	alias(fs, "temp", "temperature")
	fs.BoolVar(&cfg.NoBOS, "no-bos", false, "do not prepend the BOS token")
	fs.BoolVar(&cfg.IgnoreEOS, "ignore-eos", false, "keep generating after the end-of-sequence token")
	threads := threadsFlag(fs, "worker threads for the matrix products (0: all cores)")
	addLlamaLibFlag(fs)
	chatMode := fs.Bool("chat", false, "format the prompt as a conversation with the model's chat template")
	system := fs.String("system", "", "with --chat: a system message before the prompt")
	messages := fs.String("messages", "", "with --chat: a JSON file of the conversation instead of --prompt")
	tmplFile := fs.String("chat-template", "", "with --chat: this Jinja template instead of the model's")
	vars := chatVars{}
	fs.Var(vars, "chat-var", "with --chat: template variable KEY=VALUE (repeatable; e.g. enable_thinking=false)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *promptFile != "" {
		if cfg.Prompt != "" {
			return usageError{fmt.Errorf("give the prompt once: --prompt TEXT or -f FILE")}
		}
		b, err := os.ReadFile(*promptFile)
		if err != nil {
			return fmt.Errorf("-f: %w", err)
		}
		cfg.Prompt = strings.TrimSuffix(string(b), "\n")
	}
	if !*chatMode && (*system != "" || *messages != "" || *tmplFile != "" || len(vars) > 0) {
		return usageError{fmt.Errorf("--system, --messages, --chat-template and --chat-var need --chat")}
	}
	if *chatMode && (*messages == "") == (cfg.Prompt == "") {
		return usageError{fmt.Errorf("--chat needs either --prompt (a user message) or --messages")}
	}
	if err := cfg.Validate(); err != nil {
		return usageError{err}
	}
	tensor.SetThreads(*threads)
	m, err := openModel(ctx, "the model", cfg.Model, cfg.Tokenizer)
	if err != nil {
		return err
	}
	if *chatMode {
		if m.Tokenizer() == nil {
			return fmt.Errorf("model %s has no tokenizer: pass one with --tokenizer", m.Name())
		}
		msgs := []chat.Message{{Role: "user", Content: cfg.Prompt}}
		if *system != "" {
			msgs = append([]chat.Message{{Role: "system", Content: *system}}, msgs...)
		}
		if *messages != "" {
			if msgs, err = readMessages(*messages); err != nil {
				return err
			}
		}
		f, err := newChatFormat(m.Tokenizer(), *tmplFile, vars)
		if err != nil {
			return err
		}
		prompt, err := f.render(msgs, true)
		if err != nil {
			return err
		}
		cfg.PromptIDs = f.encode(prompt)
		if !f.templated() {
			fmt.Fprintf(stderr, "hlm generate: chat with %s\n", f.describe())
		}
	}
	out := stdout
	if *chatMode {
		// A reply starts at its first visible character, as the OpenAI
		// endpoint sends it: the template's "Assistant:" leaves the
		// model's first token a space.
		out = &leadingSpaceTrimmer{w: stdout}
	}
	st, err := generate.Generate(ctx, m, cfg, out)
	if err == nil || len(st.Tokens) > 0 {
		fmt.Fprintln(stdout) // end the text's line
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "hlm generate: %s: %d prompt tokens, %d generated (%s) in %.2fs: %.1f tokens/s (prefill %.0f ms)\n",
		m.Name(), st.PromptTokens, len(st.Tokens), st.StopReason, st.Decode.Seconds(), st.TokensPerSecond(), st.Prefill.Seconds()*1000)
	return nil
}

// leadingSpaceTrimmer writes to w what is written to it, less the white
// space before the first other character.
type leadingSpaceTrimmer struct {
	w    io.Writer
	past bool
}

func (t *leadingSpaceTrimmer) Write(b []byte) (int, error) {
	if t.past {
		return t.w.Write(b)
	}
	rest := strings.TrimLeftFunc(string(b), unicode.IsSpace)
	if rest == "" {
		return len(b), nil
	}
	t.past = true
	if _, err := io.WriteString(t.w, rest); err != nil {
		return 0, err
	}
	return len(b), nil
}
