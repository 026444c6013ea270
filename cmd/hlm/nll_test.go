package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hlmproject/hlm/model/llama"
	"github.com/hlmproject/hlm/score"
	"github.com/hlmproject/hlm/tokenizer"
)

// TestNLLKLDivergence: hlm nll --kl-base on a tiny model of the families
// testdata: against itself KL 0 and full agreement; its Q8_0 copy differs a
// little, and differently with llama.cpp's input quantization
// (--llama-inputs); a base file written with --kl-save and read with
// --kl-base-logits gives the numbers of --llama-numerics.
func TestNLLKLDivergence(t *testing.T) {
	m := filepath.Join("..", "..", "model", "llama", "testdata", "families", "llama31.gguf")
	text := filepath.Join(t.TempDir(), "text.txt")
	story := "Once upon a time, there was a little model. It was small and it was happy. "
	if err := os.WriteFile(text, []byte(strings.Repeat(story, 12)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	kl := func(args ...string) (info klInfo, s score.KLDSummary) {
		t.Helper()
		out, _, err := runHLM(t, append([]string{"nll", "--text", text, "--ctx", "32", "--json"}, args...)...)
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		var v struct {
			klInfo
			score.KLDSummary
		}
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		return v.klInfo, v.KLDSummary
	}
	info, s := kl("--model", m, "--kl-base", m)
	if info.Window != 32 || info.Windows < 2 || s.Positions != info.Windows*15 || s.KLD.Value != 0 || s.SameTop.Value != 1 || s.PPLRatio.Value != 1 {
		t.Errorf("against itself: %+v %+v", info, s)
	}
	_, q := kl("--model", m+"@q8", "--kl-base", m)
	if !(q.KLD.Value > 0 && q.KLD.Value < 0.05) || q.PPL.Value == q.PPLBase.Value || q.PPLBase.Value != s.PPL.Value {
		t.Errorf("Q8_0 copy: KLD %g, PPL %g (base %g, F32 %g)", q.KLD.Value, q.PPL.Value, q.PPLBase.Value, s.PPL.Value)
	}
	// llama.cpp's input quantization (float16 block scales) moves the
	// Q8_0 copy's numbers, not the F32 base's.
	qi, qs := kl("--model", m+"@q8", "--kl-base", m, "--llama-inputs")
	if qi.Numerics != "exact, llama.cpp inputs" || !(qs.KLD.Value > 0) || qs.KLD.Value == q.KLD.Value || qs.PPLBase.Value != s.PPL.Value {
		t.Errorf("--llama-inputs: %q, KLD %g (hlm's inputs %g), PPL(base) %g (F32 %g)", qi.Numerics, qs.KLD.Value, q.KLD.Value, qs.PPLBase.Value, s.PPL.Value)
	}
	_, ql := kl("--model", m+"@q8", "--kl-base", m, "--llama-numerics")
	base := filepath.Join(t.TempDir(), "base.kld")
	if _, _, err := runHLM(t, "nll", "--model", m, "--text", text, "--ctx", "32", "--kl-save", base); err != nil {
		t.Fatal(err)
	}
	out, _, err := runHLM(t, "nll", "--model", m+"@q8", "--kl-base-logits", base, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var fromFile score.KLDSummary
	if err := json.Unmarshal([]byte(out), &fromFile); err != nil {
		t.Fatal(err)
	}
	if fromFile != ql {
		t.Errorf("from the base file %+v\nwith --llama-numerics %+v", fromFile, ql)
	}
	// The text report has llama-perplexity's labels.
	out, _, err = runHLM(t, "nll", "--model", m+"@q8", "--kl-base", m, "--text", text, "--ctx", "32")
	if err != nil || !strings.Contains(out, "Mean    KLD:") || !strings.Contains(out, "Same top p:") {
		t.Errorf("text report: %v\n%s", err, out)
	}
	for _, bad := range [][]string{
		{"--model", m, "--kl-base", m, "--kl-save", base, "--text", text},
		{"--model", m, "--llama-numerics", "--text", text},
		{"--model", m, "--kl-base", m, "--text", text, "--ctx", "4096"},
	} {
		if _, _, err := runHLM(t, append([]string{"nll"}, bad...)...); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}

// TestNLLFlagsRefused: a window hlm nll would replace by its default (--ctx
// 0) or cannot use, and the text and window flags that --kl-base-logits's
// file fixes, are refused as usage errors — explicitly given, even with
// their default values — not ignored.
func TestNLLFlagsRefused(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string // "": accepted
	}{
		{[]string{"--text", "t.txt", "--ctx", "0", "--kl-save", "b.kld"}, "--ctx 0: want a window of 4 tokens or more"},
		{[]string{"--text", "t.txt", "--ctx", "-512", "--kl-base", "m.gguf"}, "--ctx -512: want a window of 4 tokens or more"},
		{[]string{"--text", "t.txt", "--ctx", "128"}, "--ctx apply with --kl-base or --kl-save"},
		{[]string{"--text", "t.txt", "--ctx", "128", "--chunks", "2"}, "--chunks and --ctx apply with"},
		{[]string{"--text", "t.txt", "--ctx", "3", "--kl-save", "b.kld"}, "--ctx 3: want"},
		{[]string{"--text", "t.txt", "--chunks", "-1", "--kl-save", "b.kld"}, "--chunks -1: want 0 (all windows) or more"},
		{[]string{"--kl-base-logits", "b.kld", "--text", "t.txt"}, "--kl-base-logits b.kld fixes the text's tokens and windows (llama-perplexity's -f, -c and --chunks when it wrote the file): drop --text"},
		{[]string{"--kl-base-logits", "b.kld", "--ctx", "512"}, "drop --ctx"},
		{[]string{"--kl-base-logits", "b.kld", "--chunks", "0"}, "drop --chunks"},
		{[]string{"--text", "t.txt", "--ctx", "32", "--chunks", "2", "--kl-base-logits", "b.kld"}, "drop --chunks, --ctx, --text"},
		{[]string{"--text", "t.txt", "--ctx", "4", "--kl-save", "b.kld"}, ""},
		{[]string{"--text", "t.txt"}, ""},
		{[]string{"--kl-base-logits", "b.kld"}, ""},
		{[]string{"--kl-base-logits", "b.kld", "--kl-pair", "p.kld", "--json"}, ""},
	} {
		_, err := parseNLL(c.args, io.Discard)
		if c.want == "" {
			if err != nil {
				t.Errorf("%v: %v", c.args, err)
			}
			continue
		}
		var ue usageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want a usage error saying %q", c.args, err, c.want)
		}
	}
}

// noBOSCopy copies the committed tiny GPT-2 checkpoint (model/llama/
// testdata/families/gpt2_hf, whose tokenizer adds BOS) into a temporary
// directory with add_bos_token false: GPT-2's own setting, the tokenizer of
// real GPT-2 and GPT-Neo checkpoints.
func noBOSCopy(t *testing.T) string {
	t.Helper()
	src := filepath.Join("..", "..", "model", "llama", "testdata", "families", "gpt2_hf")
	dst := filepath.Join(t.TempDir(), "gpt2_nobos")
	if err := os.Mkdir(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"config.json", "merges.txt", "model.safetensors", "tokenizer_config.json", "vocab.json"} {
		b, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		if name == "tokenizer_config.json" {
			s := strings.Replace(string(b), `"add_bos_token": true`, `"add_bos_token": false`, 1)
			if s == string(b) {
				t.Fatalf("%s: no add_bos_token to turn off", name)
			}
			b = []byte(s)
		}
		if err := os.WriteFile(filepath.Join(dst, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// TestNLLWindowsEvaluatedDirectly: the log-probabilities hlm nll --kl-save
// stores are those of each window's tokens evaluated directly through the
// model, the windows cut here by hand as llama-perplexity cuts them: the
// text's tokens, W at a time, the first replaced by BOS only when the
// tokenizer adds BOS. A tokenizer without BOS (GPT-Neo's, GPT-2's) keeps the
// text's own first token — not token 0, not BOS. Its mean NLL (computed
// exactly) is the mean over the same windows' second halves.
func TestNLLWindowsEvaluatedDirectly(t *testing.T) {
	fam := filepath.Join("..", "..", "model", "llama", "testdata", "families")
	text := filepath.Join(t.TempDir(), "text.txt")
	story := "Once upon a time, there was a little model. It was small and it was happy. In 1640, the 89 rabbits said: \"Hello, world!\"\n"
	if err := os.WriteFile(text, []byte(strings.Repeat(story, 6)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const window = 48
	for _, c := range []struct {
		name, spec string
		bos        int // the token in place of each window's first; −1: the text's own
	}{
		{"gpt_neo", filepath.Join(fam, "gpt_neo"), -1},
		{"gpt2 without BOS", noBOSCopy(t), -1},
		{"gpt2 with BOS", filepath.Join(fam, "gpt2.gguf"), 311},
		{"opt_pre", filepath.Join(fam, "opt_pre"), 311},
		{"llama31", filepath.Join(fam, "llama31.gguf"), 311},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, err := llama.OpenSpec(c.spec, "")
			if err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(text)
			if err != nil {
				t.Fatal(err)
			}
			ids := m.Tokenizer().EncodeWith(strings.TrimSuffix(string(b), "\n"), tokenizer.EncodeOptions{AddSpecial: true, PlainSpecial: true})
			if (ids[0] == 311) != (c.bos >= 0) {
				t.Fatalf("the text's tokens start %v: BOS expected %v", ids[:4], c.bos >= 0)
			}
			saved := filepath.Join(t.TempDir(), "saved.kld")
			out, _, err := runHLM(t, "nll", "--model", c.spec, "--text", text, "--ctx", strconv.Itoa(window), "--kl-save", saved, "--json")
			if err != nil {
				t.Fatal(err)
			}
			var res struct {
				Tokens  int     `json:"tokens"`
				MeanNLL float64 `json:"mean_nll"`
			}
			if err := json.Unmarshal([]byte(out), &res); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			f, err := os.Open(saved)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			lr, err := score.NewLogitsReader(f)
			if err != nil {
				t.Fatal(err)
			}
			n := len(ids) / window
			if lr.Window != window || lr.Chunks != n || n < 2 {
				t.Fatalf("file of %d windows of %d tokens; want %d of %d", lr.Chunks, lr.Window, n, window)
			}
			var (
				sum       float64
				positions int
				worst     float64 // max |stored − direct| over every token of every row, in steps
				worstAt   string
			)
			for w := range n {
				win := slices.Clone(ids[w*window : (w+1)*window])
				for i, tok := range lr.Tokens[w*window : (w+1)*window] {
					if int(tok) != win[i] {
						t.Fatalf("window %d: the file's token %d is %d, the text's %d", w, i, tok, win[i])
					}
				}
				if c.bos >= 0 {
					win[0] = c.bos
				}
				direct, err := m.NewSession().Eval(win)
				if err != nil {
					t.Fatal(err)
				}
				rows, err := lr.Next()
				if err != nil {
					t.Fatal(err)
				}
				if len(rows) != window-1-window/2 {
					t.Fatalf("window %d: %d rows", w, len(rows))
				}
				for j, got := range rows {
					i := window/2 + j
					want := score.Encode16(direct[i], nil)
					step := float64(max(got.Scale, want.Scale))
					for v := range got.Q {
						if d := math.Abs(float64(got.LogProb(v)-want.LogProb(v))) / step; d > worst {
							worst, worstAt = d, fmt.Sprintf("window %d position %d token %d: stored %.6f, direct %.6f", w, i, v, got.LogProb(v), want.LogProb(v))
						}
					}
					sum -= score.LogSoftmax(direct[i], win[i+1])
					positions++
				}
			}
			if worst > 1 {
				t.Errorf("stored log-probabilities %.1f steps from the direct evaluation's (at most 1): %s", worst, worstAt)
			}
			if want := sum / float64(positions); math.Abs(res.MeanNLL-want) > 1e-9*want {
				t.Errorf("mean NLL %.12f, direct %.12f over %d positions", res.MeanNLL, want, positions)
			}
		})
	}
}

// TestNLLLlamaPerplexityNoBOS: on a GPT-2 whose tokenizer adds no BOS, hlm
// nll's windows are llama-perplexity's: testdata/gpt2-nobos-c64.kld
// (testdata/make.sh) holds llama.cpp's log-probabilities of the same GGUF
// file on testdata/nll-text.txt in windows of 64 tokens, each window the
// text's own tokens. hlm's log-probabilities (--kl-save) agree with them
// position by position, and hlm nll --kl-base-logits of the model against
// llama.cpp's run of it is at the statistic's noise floor. llama.cpp's CPU
// GELU reads an fp16 table (model/llama/testdata/families/README.md), which
// moves the logits by up to 4.2e-3; a window starting with another token
// moves the log-probabilities by tenths of a nat.
func TestNLLLlamaPerplexityNoBOS(t *testing.T) {
	gguf := filepath.Join(t.TempDir(), "gpt2_nobos.gguf")
	if _, _, err := runHLM(t, "convert", "--model", noBOSCopy(t), "--out", gguf); err != nil {
		t.Fatal(err)
	}
	text := filepath.Join("testdata", "nll-text.txt")
	golden := filepath.Join("testdata", "gpt2-nobos-c64.kld")
	readAll := func(path string) (*score.LogitsReader, [][]score.Row16) {
		t.Helper()
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		lr, err := score.NewLogitsReader(f)
		if err != nil {
			t.Fatal(err)
		}
		var rows [][]score.Row16
		for range lr.Chunks {
			r, err := lr.Next()
			if err != nil {
				t.Fatal(err)
			}
			rows = append(rows, r)
		}
		return lr, rows
	}
	lc, lcRows := readAll(golden)
	// llama.cpp's tokens are hlm's, and no window starts with BOS.
	m, err := llama.OpenSpec(gguf, "")
	if err != nil {
		t.Fatal(err)
	}
	if m.Tokenizer().AddsBOS() {
		t.Fatal("the converted model's tokenizer adds BOS")
	}
	ids, err := textTokens(text, m.Tokenizer())
	if err != nil {
		t.Fatal(err)
	}
	if len(lc.Tokens) > len(ids) || !slices.Equal(ids[:len(lc.Tokens)], intsOf(lc.Tokens)) {
		t.Fatalf("llama.cpp's tokens differ from hlm's:\n%v\n%v", lc.Tokens, ids)
	}
	saved := filepath.Join(t.TempDir(), "hlm.kld")
	if _, _, err := runHLM(t, "nll", "--model", gguf, "--text", text, "--ctx", strconv.Itoa(lc.Window), "--kl-save", saved); err != nil {
		t.Fatal(err)
	}
	hl, hlRows := readAll(saved)
	if hl.Window != lc.Window || hl.Chunks != lc.Chunks || !slices.Equal(hl.Tokens, lc.Tokens) {
		t.Fatalf("hlm's file: %d windows of %d tokens; llama.cpp's %d of %d, or other tokens", hl.Chunks, hl.Window, lc.Chunks, lc.Window)
	}
	// nats: llama.cpp's fp16 GELU table moves this model's logits by up to
	// 4.2e-3 (model/llama/testdata/families/README.md), a log-probability
	// by up to twice that (its logit and the log-sum-exp), and each side's
	// 16-bit storage by a step (2.4e-4 at most). Measured: 4.6e-3.
	const tol = 1e-2
	var worst float64
	var worstAt string
	for w := range lcRows {
		for j := range lcRows[w] {
			a, b := lcRows[w][j], hlRows[w][j]
			for v := range a.Q {
				if d := math.Abs(float64(a.LogProb(v) - b.LogProb(v))); d > worst {
					worst, worstAt = d, fmt.Sprintf("window %d position %d token %d: llama.cpp %.6f, hlm %.6f", w, lc.Window/2+j, v, a.LogProb(v), b.LogProb(v))
				}
			}
		}
	}
	if worst > tol {
		t.Errorf("hlm's log-probabilities %.2g nats from llama-perplexity's (at most %g): %s", worst, tol, worstAt)
	}
	out, _, err := runHLM(t, "nll", "--model", gguf, "--kl-base-logits", golden, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var s score.KLDSummary
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if s.Positions != lc.Chunks*(lc.Window-1-lc.Window/2) || math.Abs(s.KLD.Value) > 1e-5 || s.KLDQuantiles.Max > 2e-4 || s.SameTop.Value != 1 {
		t.Errorf("against llama.cpp's run of the same model: %d positions, mean KLD %g, max %g, same top %.4f; want KLD ≈ 0 (llama.cpp's own noise floor: mean ±2e-6, max 4e-5), same top 1",
			s.Positions, s.KLD.Value, s.KLDQuantiles.Max, s.SameTop.Value)
	}
	// --kl-pair reads the windows the same way: this run against its own
	// saved copy differs by nothing, and both are llama.cpp's.
	out, _, err = runHLM(t, "nll", "--model", gguf, "--kl-base-logits", golden, "--kl-pair", saved, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var p struct {
		Paired score.Paired `json:"paired"`
	}
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if q := p.Paired; q.Positions != s.Positions || q.Diff.Value != 0 || q.TopOnly+q.OtherTopOnly != 0 || math.Abs(q.KLD) > 1e-5 {
		t.Errorf("paired with hlm's own saved run: %+v; want no difference and KLD ≈ 0", q)
	}
}

// intsOf widens a base file's tokens.
func intsOf(ts []int32) []int {
	out := make([]int, len(ts))
	for i, t := range ts {
		out[i] = int(t)
	}
	return out
}
