package main

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/hlmproject/hlm/model/builtin"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/hlmproject/hlm/dataset"
	"github.com/hlmproject/hlm/internal/atomicfile"
	"github.com/hlmproject/hlm/model"
	"github.com/hlmproject/hlm/score"
	"github.com/hlmproject/hlm/tensor"
	"github.com/hlmproject/hlm/tokenizer"
)

func init() {
	register("nll", "mean negative log-likelihood (and perplexity) of a model on a text file; KL divergence from a base model", runNLL)
}

// nllAbout is hlm nll --help's text.
const nllAbout = `
Score a text file under a model: the mean negative log-likelihood per token in
nats and the perplexity. Stories are split on <|endoftext|>, else blank lines,
else lines; each is encoded as the tokenizer encodes a text (BOS first when it
adds one; GPT-2's and GPT-Neo's add none) and scored in windows of the
context length, each window's first token context only, not scored.

With --kl-base SPEC, compare the model with a base model (e.g. a quantized
GGUF with the F32 GGUF it came from) position by position, as
llama-perplexity --kl-divergence does, on the same tokens and windows: the
mean KL(base ‖ model) per token with its standard error and its quantiles,
the fraction of positions whose most likely tokens agree ("same top"), the
mean NLL and perplexity of each with their ratio and difference, and
Δp = p_model(token) − p_base(token).

The windows are llama-perplexity's, not those of plain scoring: the whole
file (one trailing newline dropped) is one sequence, special tokens read as
plain text, BOS first when the tokenizer adds one, cut into windows of --ctx
tokens (the remainder dropped); each window is evaluated on its own, and
only its second half is scored (positions ctx/2 … ctx−2), so each scored
token has ctx/2 tokens of context or more. A window's first token is the
model tokenizer's BOS when that tokenizer adds one (llama.cpp's add_bos),
and the text's own token when it adds none (GPT-2, GPT-Neo and other
byte-level BPEs without add_bos_token): its other tokens are the text's.
The same layout holds for the files of --kl-save and --kl-base-logits: they
store the text's tokens (never the BOS that replaces a window's first), and
the model reading one puts its own BOS there, or none, as its tokenizer
says.

The statistics are perplexity.cpp's (standard errors √(var/(n−1)), 0 when
n ≤ 10; quantiles interpolated linearly) computed exactly: float64
log-softmaxes over the whole vocabulary. llama.cpp stores the base's
log-probabilities in 16 bits over the 16 nats below the top token and leaves
tokens under −16 nats out of the KL sum: the base's NLL of a token far below
the top is capped (its PPL(base), and so its PPL ratio, reads low) and tiny
divergences are noisy (negative ones appear). --llama-numerics stores the
base the same way, for numbers comparable with llama.cpp's.

--llama-inputs computes the products of quantized matrices (Q8_0, Q4_0,
Q5_0, Q4_K, Q6_K) with their inputs quantized as llama.cpp quantizes them:
each block's 8-bit scale rounded to float16 where hlm keeps it in float32
(tensor.SetLlamaInputs). A quantized file then gives llama.cpp's numbers up
to the order of float sums, which tells the two engines' quantization
choices apart from the files' own.

--kl-base-logits FILE takes the base from a file written by
llama-perplexity --kl-divergence-base (or --kl-save): its tokens, windows
and stored log-probabilities, compared as llama.cpp compares them (the
file fixes the text and the windows: --text, --ctx and --chunks are
refused with it). --kl-save FILE writes the model's own log-probabilities
on the text's windows as such a file, for llama-perplexity
--kl-divergence-base FILE --kl-divergence.

--kl-pair FILE, with --kl-base-logits, compares hlm's run of the model with
another engine's run of the same model on the same windows, saved by
llama-perplexity --kl-divergence-base: the mean of the two KL divergences'
difference from the base, position by position, with its standard error
(the paired error, much smaller than either mean's), and how many positions
only one of the runs has the base's top token. Both runs go through the
16-bit storage, so neither gains from it.`

// nllFlags are hlm nll's flags.
type nllFlags struct {
	spec, tokPath, text            string
	threads, window, chunks        int
	klBase, klFile, klPair, klSave string
	llamaNum, llamaInputs, asJSON  bool
}

// parseNLL parses and checks hlm nll's flags.
func parseNLL(args []string, stdout io.Writer) (nllFlags, error) {
	var f nllFlags
	fs := newFlags("nll", "[--model SPEC] (--text FILE [--kl-base SPEC | --kl-save FILE] [--ctx 512] [--chunks N] | --kl-base-logits FILE [--kl-pair FILE]) [--llama-numerics] [--llama-inputs] [--json]", nllAbout, stdout)
	fs.StringVar(&f.spec, "model", builtin.DefaultLLM, "model spec")
	fs.StringVar(&f.tokPath, "tokenizer", "", "tokenizer file, when not found with the model")
	addLlamaLibFlag(fs)
	fs.StringVar(&f.text, "text", "", "text file (e.g. ../shared/data/tinystories/TinyStories-valid-sample.txt); not with --kl-base-logits, whose file holds the tokens")
	threadsVar(fs, &f.threads, "worker threads (0: all cores)")
	alias(fs, "m", "model")
	alias(fs, "f", "text")
	fs.StringVar(&f.klBase, "kl-base", "", "base model spec: report the KL divergence of --model from it")
	fs.StringVar(&f.klFile, "kl-base-logits", "", "base log-probabilities from llama-perplexity --kl-divergence-base")
	fs.StringVar(&f.klPair, "kl-pair", "", "with --kl-base-logits: another engine's log-probabilities of the model (llama-perplexity --kl-divergence-base), compared position by position")
	fs.StringVar(&f.klSave, "kl-save", "", "write the model's log-probabilities as a llama-perplexity --kl-divergence-base file")
	fs.IntVar(&f.window, "ctx", score.DefaultWindow, "tokens per window with --kl-base and --kl-save, at least 4 (llama-perplexity -c; --kl-base-logits takes the file's)")
	fs.IntVar(&f.chunks, "chunks", 0, "at most this many windows with --kl-base and --kl-save (0: all; llama-perplexity --chunks; --kl-base-logits takes the file's)")
	fs.BoolVar(&f.llamaNum, "llama-numerics", false, "with --kl-base: store the base's log-probabilities as llama.cpp does (16 bits, −16 nats floor)")
	fs.BoolVar(&f.llamaInputs, "llama-inputs", false, "quantize the inputs of quantized matrices' products as llama.cpp does (float16 block scales)")
	fs.BoolVar(&f.asJSON, "json", false, "print the results as JSON")
	if err := parse(fs, args); err != nil {
		return f, err
	}
	// given lists the flags of names the command line set (under their
	// names or an alias), in lexical order, as "--NAME": flags that would
	// be ignored are refused, not ignored.
	given := func(names ...string) []string {
		var out []string
		for _, n := range names {
			if isSet(fs, n) {
				out = append(out, "--"+n)
			}
		}
		slices.Sort(out)
		return out
	}
	if fixed := given("text", "ctx", "chunks"); f.klFile != "" && len(fixed) > 0 {
		// The file fixes the tokens and windows.
		return f, usageError{fmt.Errorf("--kl-base-logits %s fixes the text's tokens and windows (llama-perplexity's -f, -c and --chunks when it wrote the file): drop %s", f.klFile, strings.Join(fixed, ", "))}
	}
	if windowed := given("ctx", "chunks"); f.klBase == "" && f.klSave == "" && f.klFile == "" && len(windowed) > 0 {
		// Plain scoring reads the text in windows of the model's own context.
		return f, usageError{fmt.Errorf("%s apply with --kl-base or --kl-save (llama-perplexity's windows); plain nll scores the text in windows of the model's context: drop them, or add --kl-save FILE", strings.Join(windowed, " and "))}
	}
	if f.window < 4 {
		return f, usageError{fmt.Errorf("--ctx %d: want a window of 4 tokens or more, up to the model's context length (default %d)", f.window, score.DefaultWindow)}
	}
	if f.chunks < 0 {
		return f, usageError{fmt.Errorf("--chunks %d: want 0 (all windows) or more", f.chunks)}
	}
	modes := 0
	for _, s := range []string{f.klBase, f.klFile, f.klSave} {
		if s != "" {
			modes++
		}
	}
	switch {
	case modes > 1:
		return f, usageError{fmt.Errorf("--kl-base, --kl-base-logits and --kl-save are exclusive")}
	case f.text == "" && f.klFile == "":
		return f, usageError{fmt.Errorf("--text FILE is required (the text to score), or --kl-base-logits FILE (a KL divergence from saved logits)")}
	case f.klPair != "" && f.klFile == "":
		return f, usageError{fmt.Errorf("--kl-pair goes with --kl-base-logits")}
	case f.llamaNum && f.klBase == "":
		return f, usageError{fmt.Errorf("--llama-numerics goes with --kl-base (--kl-base-logits always compares as llama.cpp does)")}
	}
	if sp, err := model.ParseSpec(f.spec); err == nil && sp.Backend != "" && f.llamaInputs {
		return f, usageError{fmt.Errorf("--llama-inputs sets how hlm's engine quantizes inputs; %s runs on %s, which quantizes its own way: drop the flag or @%s", f.spec, sp.Backend, sp.Backend)}
	}
	return f, nil
}

func runNLL(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f, err := parseNLL(args, stdout)
	if err != nil {
		return err
	}
	tensor.SetThreads(f.threads)
	tensor.SetLlamaInputs(f.llamaInputs)
	defer tensor.SetLlamaInputs(false)
	m, err := openModel(ctx, "the model", f.spec, f.tokPath)
	if err != nil {
		return err
	}
	if m.Tokenizer() == nil {
		return fmt.Errorf("model %s has no tokenizer: pass --tokenizer", f.spec)
	}
	status := statusLine(stderr)
	r := nllRun{nllFlags: f, m: m, bos: windowBOS(m.Tokenizer()), stdout: stdout,
		progress: func(done, total int) { status(done, total, fmt.Sprintf("scored %d/%d windows", done, total)) }}
	switch {
	case f.klFile != "":
		return r.fromFile(ctx)
	case f.klBase != "":
		return r.againstBase(ctx)
	case f.klSave != "":
		return r.save(ctx)
	}
	return plainNLL(ctx, m, f.text, f.asJSON, stdout, status)
}

// windowBOS is the token that replaces each window's first, as
// llama-perplexity's add_bos says: the tokenizer's BOS when it adds one,
// else score.NoBOS (GPT-2, GPT-Neo: the window keeps the text's token).
func windowBOS(tok *tokenizer.Tokenizer) int {
	if tok.AddsBOS() {
		return tok.BOS()
	}
	return score.NoBOS
}

// nllRun is one hlm nll run with a base: the flags, the model, where the
// results go.
type nllRun struct {
	nllFlags
	m        model.Model
	bos      int // windowBOS of the model's tokenizer
	stdout   io.Writer
	progress func(done, total int)
}

// numerics names how a run computes (klInfo.Numerics).
func (r *nllRun) numerics(stats string) string {
	if r.llamaInputs {
		return stats + ", llama.cpp inputs"
	}
	return stats
}

// fromFile is --kl-base-logits FILE (with --kl-pair OTHER: pairedNLL).
func (r *nllRun) fromFile(ctx context.Context) error {
	f, err := os.Open(r.klFile)
	if err != nil {
		return err
	}
	defer f.Close()
	lr, err := score.NewLogitsReader(f)
	if err != nil {
		return fmt.Errorf("%s: %w", r.klFile, err)
	}
	info := klInfo{Model: r.m.Name(), Base: r.klFile, Window: lr.Window, Windows: lr.Chunks, Numerics: r.numerics("llama.cpp")}
	if r.klPair != "" {
		return pairedNLL(ctx, lr, r.klPair, r.m, r.bos, info, r.asJSON, r.stdout, r.progress)
	}
	k, err := score.DivergenceFile(ctx, lr, r.m, r.bos, r.progress)
	if err != nil {
		return err
	}
	return r.report(info, k)
}

// againstBase is --kl-base SPEC: both models on the text's windows.
func (r *nllRun) againstBase(ctx context.Context) error {
	base, err := openModel(ctx, "the base model", r.klBase, r.tokPath)
	if err != nil {
		return err
	}
	ids, err := textTokens(r.text, r.m.Tokenizer())
	if err != nil {
		return err
	}
	if base.Tokenizer() != nil {
		if bids, _ := textTokens(r.text, base.Tokenizer()); !slices.Equal(ids, bids) {
			return fmt.Errorf("%w: %s and %s tokenize the text differently", score.ErrMismatch, r.spec, r.klBase)
		}
	}
	wc := score.WindowConfig{Window: r.window, Chunks: r.chunks, BOS: r.bos}
	windows, err := score.Windows(ids, wc)
	if err != nil {
		return err
	}
	info := klInfo{Model: r.m.Name(), Base: base.Name(), Tokens: len(ids), Window: len(windows[0]), Windows: len(windows), Numerics: r.numerics("exact")}
	if r.llamaNum {
		info.Numerics = r.numerics("llama.cpp")
	}
	k, err := score.Divergence(ctx, base, r.m, ids, wc, r.llamaNum, r.progress)
	if err != nil {
		return err
	}
	return r.report(info, k)
}

// save is --kl-save FILE.
func (r *nllRun) save(ctx context.Context) error {
	ids, err := textTokens(r.text, r.m.Tokenizer())
	if err != nil {
		return err
	}
	wc := score.WindowConfig{Window: r.window, Chunks: r.chunks, BOS: r.bos}
	var res score.Result
	err = atomicfile.Write(r.klSave, func(w io.Writer) error {
		res, err = score.SaveBase(ctx, r.m, ids, wc, w, r.progress)
		return err
	})
	if err != nil {
		return err
	}
	if r.asJSON {
		return json.NewEncoder(r.stdout).Encode(struct {
			Model  string `json:"model"`
			Tokens int    `json:"tokens"`
			score.Result
			MeanNLL    float64 `json:"mean_nll"`
			Perplexity float64 `json:"perplexity"`
		}{r.m.Name(), len(ids), res, res.Mean(), res.Perplexity()})
	}
	fmt.Fprintf(r.stdout, "model %s: wrote %s: %d scored positions of %d tokens: mean NLL %.6f nats/token, perplexity %.6f\n",
		r.m.Name(), r.klSave, res.Tokens, len(ids), res.Mean(), res.Perplexity())
	return nil
}

// report prints a divergence's statistics.
func (r *nllRun) report(info klInfo, k *score.KLD) error {
	s := k.Summary()
	if r.asJSON {
		return json.NewEncoder(r.stdout).Encode(struct {
			klInfo
			score.KLDSummary
		}{info, s})
	}
	writeKLD(r.stdout, info, s)
	return nil
}

// pairedNLL is hlm nll --kl-base-logits BASE --kl-pair OTHER.
func pairedNLL(ctx context.Context, base *score.LogitsReader, otherPath string, m model.Model, bos int, info klInfo, asJSON bool, stdout io.Writer, progress func(done, total int)) error {
	f, err := os.Open(otherPath)
	if err != nil {
		return err
	}
	defer f.Close()
	other, err := score.NewLogitsReader(f)
	if err != nil {
		return fmt.Errorf("%s: %w", otherPath, err)
	}
	p, err := score.PairedFile(ctx, base, other, m, bos, progress)
	if err != nil {
		return err
	}
	if asJSON {
		return json.NewEncoder(stdout).Encode(struct {
			klInfo
			Other  string       `json:"other"`
			Paired score.Paired `json:"paired"`
		}{info, otherPath, p})
	}
	fmt.Fprintf(stdout, "model %s against base %s, paired with %s: %d positions, the second halves of %d windows of %d tokens\n",
		info.Model, info.Base, otherPath, p.Positions, info.Windows, info.Window)
	fmt.Fprintf(stdout, "Mean KLD (both stored in 16 bits): %.7f, other %.7f\n", p.KLD, p.OtherKLD)
	fmt.Fprintf(stdout, "Paired difference: %+.7f ± %.7f", p.Diff.Value, p.Diff.Err)
	if p.Diff.Err > 0 {
		fmt.Fprintf(stdout, " (%+.1f standard errors)", p.Diff.Value/p.Diff.Err)
	}
	fmt.Fprintf(stdout, "\nSame top as the base: this run only at %d positions, the other only at %d\n", p.TopOnly, p.OtherTopOnly)
	return nil
}

// klInfo says what a KL divergence was measured on.
type klInfo struct {
	Model    string `json:"model"`
	Base     string `json:"base"`
	Tokens   int    `json:"tokens,omitempty"` // the text's, when hlm tokenized it
	Window   int    `json:"window"`
	Windows  int    `json:"windows"`
	Numerics string `json:"numerics"` // "exact" or "llama.cpp" (16-bit base), then ", llama.cpp inputs" with --llama-inputs
}

// textTokens encodes a text file as llama-perplexity does: one sequence
// with BOS, special tokens as plain text, one trailing newline dropped.
func textTokens(path string, tok *tokenizer.Tokenizer) ([]int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	s := strings.TrimSuffix(string(b), "\n")
	return tok.EncodeWith(s, tokenizer.EncodeOptions{AddSpecial: true, PlainSpecial: true}), nil
}

// writeKLD prints the statistics as llama-perplexity --kl-divergence
// prints them at the end of its run (same labels and formats).
func writeKLD(w io.Writer, info klInfo, s score.KLDSummary) {
	fmt.Fprintf(w, "model %s, base %s (%s numerics): %d positions, the second halves of %d windows of %d tokens\n\n",
		info.Model, info.Base, info.Numerics, s.Positions, info.Windows, info.Window)
	fmt.Fprintf(w, "====== Perplexity statistics ======\n")
	fmt.Fprintf(w, "Mean PPL(Q)                   : %10.6f ± %10.6f\n", s.PPL.Value, s.PPL.Err)
	fmt.Fprintf(w, "Mean PPL(base)                : %10.6f ± %10.6f\n", s.PPLBase.Value, s.PPLBase.Err)
	fmt.Fprintf(w, "Cor(ln(PPL(Q)), ln(PPL(base))): %6.2f%%\n", 100*s.LogPPLCorrelation)
	fmt.Fprintf(w, "Mean ln(PPL(Q)/PPL(base))     : %10.6f ± %10.6f\n", s.LogPPLRatio.Value, s.LogPPLRatio.Err)
	fmt.Fprintf(w, "Mean PPL(Q)/PPL(base)         : %10.6f ± %10.6f\n", s.PPLRatio.Value, s.PPLRatio.Err)
	fmt.Fprintf(w, "Mean PPL(Q)-PPL(base)         : %10.6f ± %10.6f\n\n", s.PPLDiff.Value, s.PPLDiff.Err)
	fmt.Fprintf(w, "====== KL divergence statistics ======\n")
	fmt.Fprintf(w, "Mean    KLD: %10.6f ± %10.6f\n", s.KLD.Value, s.KLD.Err)
	q := s.KLDQuantiles
	for _, r := range []struct {
		label string
		v     float64
	}{{"Maximum", q.Max}, {"99.9%  ", q.P99_9}, {"99.0%  ", q.P99}, {"95.0%  ", q.P95}, {"90.0%  ", q.P90},
		{"Median ", q.Median}, {"10.0%  ", q.P10}, {" 5.0%  ", q.P5}, {" 1.0%  ", q.P1}, {" 0.1%  ", q.P0_1}, {"Minimum", q.Min}} {
		fmt.Fprintf(w, "%s KLD: %10.6f\n", r.label, r.v)
	}
	fmt.Fprintf(w, "\n====== Token probability statistics ======\n")
	fmt.Fprintf(w, "Mean    Δp: %6.3f ± %5.3f %%\n", 100*s.PDiff.Value, 100*s.PDiff.Err)
	p := s.PDiffQuantiles
	for _, r := range []struct {
		label string
		v     float64
	}{{"Maximum", p.Max}, {"99.9%  ", p.P99_9}, {"99.0%  ", p.P99}, {"95.0%  ", p.P95}, {"90.0%  ", p.P90}, {"75.0%  ", p.P75},
		{"Median ", p.Median}, {"25.0%  ", p.P25}, {"10.0%  ", p.P10}, {" 5.0%  ", p.P5}, {" 1.0%  ", p.P1}, {" 0.1%  ", p.P0_1}, {"Minimum", p.Min}} {
		fmt.Fprintf(w, "%s Δp: %6.3f%%\n", r.label, 100*r.v)
	}
	fmt.Fprintf(w, "RMS Δp    : %6.3f ± %5.3f %%\n", 100*s.PDiffRMS.Value, 100*s.PDiffRMS.Err)
	fmt.Fprintf(w, "Same top p: %6.3f ± %5.3f %%\n", 100*s.SameTop.Value, 100*s.SameTop.Err)
}

// plainNLL is hlm nll without a base: the stories of a text, each scored
// on its own.
func plainNLL(ctx context.Context, m model.Model, text string, asJSON bool, stdout io.Writer, status func(done, total int, msg string)) error {
	stories, err := dataset.LoadTinyStories(text)
	if err != nil {
		return err
	}
	var total score.Result
	for i, s := range stories {
		if err := ctx.Err(); err != nil {
			return err
		}
		r, err := score.Text(m, m.Tokenizer().Encode(s.Text, true))
		if err != nil {
			return err
		}
		total.Add(r)
		status(i+1, len(stories), fmt.Sprintf("scored %d/%d stories", i+1, len(stories)))
	}
	if asJSON {
		return json.NewEncoder(stdout).Encode(struct {
			Model   string `json:"model"`
			Stories int    `json:"stories"`
			score.Result
			MeanNLL    float64 `json:"mean_nll"`
			Perplexity float64 `json:"perplexity"`
		}{m.Name(), len(stories), total, total.Mean(), total.Perplexity()})
	}
	fmt.Fprintf(stdout, "model %s: %d tokens in %d stories: mean NLL %.4f nats/token, perplexity %.3f\n",
		m.Name(), total.Tokens, len(stories), total.Mean(), total.Perplexity())
	return nil
}
