package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/hlmproject/hlm/model/builtin"
	"github.com/hlmproject/hlm/model/llama"
	"github.com/hlmproject/hlm/tokenizer"
)

func init() {
	register("tokenize", "token ids of a text under a model's tokenizer (shaped like llama-tokenize)", runTokenize)
	register("detokenize", "text of token ids under a model's tokenizer", runDetokenize)
}

func runTokenize(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("tokenize", "[--model SPEC] [--ids | --pieces] [--no-bos] [--no-parse-special] (TEXT | -p TEXT | -f FILE | --stdin)", `
Print the tokens of a text as the model's tokenizer encodes it. The model is
any spec (GGUF, Hugging Face directory, llama2.c checkpoint, builtin:NAME;
default the built-in stories260K) or a directory holding only tokenizer
files (tokenizer.json + tokenizer_config.json, or vocab.json + merges.txt);
no weights are loaded.

Special tokens written in the text ("<s>", "<|im_start|>", ...) become their
ids, as Hugging Face does and llama-tokenize does with --parse-special;
--no-parse-special spells them as text. BOS (and EOS) are added as the
tokenizer's configuration says unless --no-bos.

Output, as llama-tokenize prints it: one "ID -> 'PIECE'" line per token; with
--ids a list like [9906, 1917]; with --pieces a JSON list of the pieces' text.`, stdout)
	spec := fs.String("model", builtin.DefaultLLM, "model spec or tokenizer directory/file")
	tokPath := fs.String("tokenizer", "", "tokenizer file, instead of the model's")
	ids := fs.Bool("ids", false, "print only the ids, as a list like [9906, 1917]")
	pieces := fs.Bool("pieces", false, "print the pieces' text, as a JSON list")
	noBOS := fs.Bool("no-bos", false, "do not add BOS/EOS")
	// --parse-special=false and --no-parse-special are one setting: the
	// last given wins.
	parseSpecial := true
	fs.BoolVar(&parseSpecial, "parse-special", true, "special tokens written in the text become their ids (the default; for llama-tokenize's command lines); =false is --no-parse-special")
	fs.Var(negatedBool{&parseSpecial}, "no-parse-special", "encode special tokens written in the text as plain text (--parse-special=false)")
	file := fs.String("f", "", "read the text from `FILE`")
	fs.StringVar(file, "file", "", "same as -f")
	stdin := fs.Bool("stdin", false, "read the text from standard input")
	count := fs.Bool("show-count", false, "print the number of tokens last")
	prompt := fs.String("p", "", "the text to tokenize (llama-tokenize's -p; the same as giving TEXT)")
	alias(fs, "m", "model")
	rest, err := parseInterspersed(fs, args)
	if err != nil {
		return flagErr(fs, err)
	}
	if isSet(fs, "p") {
		if len(rest) > 0 {
			return usageError{fmt.Errorf("give the text once: -p TEXT or TEXT")}
		}
		rest = []string{*prompt}
	}
	if *ids && *pieces {
		return usageError{fmt.Errorf("--ids and --pieces exclude each other")}
	}
	text, err := inputText(rest, *file, *stdin)
	if err != nil {
		return err
	}
	tok, err := llama.OpenTokenizer(*spec, *tokPath)
	if err != nil {
		return err
	}
	out := tok.EncodeWith(text, tokenizer.EncodeOptions{AddSpecial: !*noBOS, PlainSpecial: !parseSpecial})
	var b strings.Builder
	switch {
	case *ids:
		b.WriteByte('[')
		for i, id := range out {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(strconv.Itoa(id))
		}
		b.WriteString("]\n")
	case *pieces:
		texts := make([]string, len(out))
		for i, id := range out {
			texts[i] = tok.TokenText(id)
		}
		// Pieces as they are written ("<s>", not "\u003cs\u003e"); the
		// encoder ends the list with a newline.
		e := json.NewEncoder(&b)
		e.SetEscapeHTML(false)
		e.Encode(texts)
	default:
		for _, id := range out {
			fmt.Fprintf(&b, "%6d -> '%s'\n", id, tok.TokenText(id))
		}
	}
	if *count {
		fmt.Fprintf(&b, "Total number of tokens: %d\n", len(out))
	}
	_, err = io.WriteString(stdout, b.String())
	return err
}

func runDetokenize(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("detokenize", "[--model SPEC] [--special] (IDS | -f FILE | --stdin)", `
Print the text of token ids under the model's tokenizer, exactly, with no
added newline. The ids are integers separated by spaces or commas, with or
without brackets (the output of hlm tokenize --ids, or of llama-tokenize).
Control tokens (BOS, EOS, end of turn) are left out unless --special. The
model defaults to the built-in stories260K, as in hlm tokenize.`, stdout)
	spec := fs.String("model", builtin.DefaultLLM, "model spec or tokenizer directory/file")
	tokPath := fs.String("tokenizer", "", "tokenizer file, instead of the model's")
	special := fs.Bool("special", false, "print control tokens by their names")
	file := fs.String("f", "", "read the ids from `FILE`")
	stdin := fs.Bool("stdin", false, "read the ids from standard input")
	alias(fs, "m", "model")
	rest, err := parseInterspersed(fs, args)
	if err != nil {
		return flagErr(fs, err)
	}
	text, err := inputText(rest, *file, *stdin)
	if err != nil {
		return err
	}
	tok, err := llama.OpenTokenizer(*spec, *tokPath)
	if err != nil {
		return err
	}
	fields := strings.FieldsFunc(text, func(r rune) bool {
		return r == ',' || r == '[' || r == ']' || r == ' ' || r == '\t' || r == '\n' || r == '\r'
	})
	ids := make([]int, len(fields))
	for i, f := range fields {
		n, err := strconv.Atoi(f)
		if err != nil {
			return usageError{fmt.Errorf("%q is not a token id", f)}
		}
		if n < 0 || n >= tok.VocabSize() {
			return fmt.Errorf("token id %d out of range [0, %d)", n, tok.VocabSize())
		}
		ids[i] = n
	}
	if !*special {
		_, err = io.WriteString(stdout, tok.Decode(ids))
		return err
	}
	// Runs of ordinary tokens decode together (a character may span
	// several byte tokens); control tokens are printed by name.
	var b strings.Builder
	start := 0
	for i, id := range ids {
		if ty := tok.Type(id); ty == tokenizer.TypeControl || ty == tokenizer.TypeUnknown {
			b.WriteString(tok.Decode(ids[start:i]))
			b.WriteString(tok.TokenText(id))
			start = i + 1
		}
	}
	b.WriteString(tok.Decode(ids[start:]))
	_, err = io.WriteString(stdout, b.String())
	return err
}

// inputText is the text to work on: the positional arguments (joined by
// spaces, as a shell's words), a file, or standard input.
func inputText(args []string, file string, stdin bool) (string, error) {
	n := min(len(args), 1)
	if file != "" {
		n++
	}
	if stdin {
		n++
	}
	if n != 1 {
		return "", usageError{fmt.Errorf("give the input once: as an argument, with -f FILE, or with --stdin")}
	}
	switch {
	case file != "":
		b, err := os.ReadFile(file)
		return string(b), err
	case stdin:
		b, err := io.ReadAll(os.Stdin)
		return string(b), err
	}
	return strings.Join(args, " "), nil
}

// parseInterspersed parses flags before, between and after the positional
// arguments (llama-tokenize's users put them anywhere: "TEXT --ids" must
// not tokenize "--ids") and returns the positional ones; "--" ends the
// flags, for a text that starts with '-'.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			return append(pos, rest...), nil
		}
		if len(rest) == 0 {
			return pos, nil
		}
		pos, args = append(pos, rest[0]), rest[1:]
	}
}

// negatedBool is a boolean flag that sets the variable of another to its
// negation: --no-X beside --X.
type negatedBool struct{ p *bool }

func (b negatedBool) IsBoolFlag() bool { return true }

func (b negatedBool) String() string {
	if b.p == nil { // the zero value flag.PrintDefaults makes
		return "false"
	}
	return strconv.FormatBool(!*b.p)
}

func (b negatedBool) Set(s string) error {
	v, err := strconv.ParseBool(s)
	if err != nil {
		return errors.New("want true or false")
	}
	*b.p = !v
	return nil
}

// flagErr passes --help through and marks other flag errors as usage
// errors.
func flagErr(fs *flag.FlagSet, err error) error {
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return err
	}
	return usageError{withSuggestion(fs, err)}
}
