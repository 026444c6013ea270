package score

import (
	"math"
	"os"
	"testing"

	"github.com/hlmproject/hlm/dataset"
	"github.com/hlmproject/hlm/model"
	"github.com/hlmproject/hlm/model/llama"
)

func TestLogSoftmax(t *testing.T) {
	l := []float32{1, 2, 3}
	z := math.Exp(1) + math.Exp(2) + math.Exp(3)
	if got, want := LogSoftmax(l, 1), 2-math.Log(z); math.Abs(got-want) > 1e-12 {
		t.Errorf("LogSoftmax = %g, want %g", got, want)
	}
}

func TestTextWindowsMatchContinuation(t *testing.T) {
	w, err := llama.RandomWeights(model.Config{Dim: 32, Hidden: 32, Layers: 1, Heads: 2, KVHeads: 2, Vocab: 20, SeqLen: 8}, 1)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := llama.New(w, nil, "r")
	ids := []int{1, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}
	got, err := Text(m, ids)
	if err != nil {
		t.Fatal(err)
	}
	if got.Tokens != len(ids)-1 {
		t.Fatalf("scored %d tokens, want %d", got.Tokens, len(ids)-1)
	}
	a, _ := Continuation(m, ids[:1], ids[1:8])
	b, _ := Continuation(m, ids[7:8], ids[8:])
	if math.Abs(got.Sum-a.Sum-b.Sum) > 1e-9 {
		t.Errorf("windows %g + %g != %g", a.Sum, b.Sum, got.Sum)
	}
	if _, err := Continuation(m, ids[:1], ids[1:]); err == nil {
		t.Error("overlong continuation: no error")
	}
}

// TestTinyStoriesNLL reports the mean NLL of both real models on the shared
// TinyStories sample, and checks it is far better than uniform guessing.
func TestTinyStoriesNLL(t *testing.T) {
	const data = "../../shared/data/tinystories/TinyStories-valid-sample.txt"
	if _, err := os.Stat(data); err != nil {
		t.Skipf("shared data not present (%v)", err)
	}
	stories, err := dataset.LoadTinyStories(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, spec := range []string{"../../shared/models/tinystories-656k", "../../shared/models/stories260K/stories260K.bin"} {
		m, err := llama.OpenSpec(spec, "")
		if err != nil {
			t.Fatal(err)
		}
		var r Result
		for _, s := range stories {
			res, err := Text(m, m.Tokenizer().Encode(s.Text, true))
			if err != nil {
				t.Fatal(err)
			}
			r.Add(res)
		}
		uniform := math.Log(float64(m.Config().Vocab))
		t.Logf("%s: mean NLL %.4f nats/token (perplexity %.2f) over %d tokens of %d stories; uniform would be %.2f", spec, r.Mean(), r.Perplexity(), r.Tokens, len(stories), uniform)
		if !(r.Mean() < uniform/2) {
			t.Errorf("%s: mean NLL %.3f is not far below uniform %.3f", spec, r.Mean(), uniform)
		}
	}
}
