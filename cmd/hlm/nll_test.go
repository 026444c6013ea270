package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hlmproject/hlm/score"
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
