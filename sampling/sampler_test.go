package sampling

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestSamplerValidate(t *testing.T) {
	tests := []struct {
		s  Sampler
		ok bool
	}{
		{Sampler{}, true},
		{Sampler{Temperature: 0.8, TopK: 40, TopP: 0.95}, true},
		{Sampler{Temperature: 1, TopP: 1}, true},
		{Sampler{Temperature: -0.1}, false},
		{Sampler{Temperature: math.NaN()}, false},
		{Sampler{Temperature: math.Inf(1)}, false},
		{Sampler{Temperature: 1, TopK: -1}, false},
		{Sampler{Temperature: 1, TopP: 1.01}, false},
		{Sampler{Temperature: 1, TopP: -0.5}, false},
		{Sampler{Temperature: 1, TopP: math.NaN()}, false},
	}
	for _, tt := range tests {
		err := tt.s.Validate()
		if (err == nil) != tt.ok {
			t.Errorf("%+v: Validate() = %v, want ok=%v", tt.s, err, tt.ok)
		}
		if err != nil && !errors.Is(err, ErrInvalidSampler) {
			t.Errorf("%+v: error %v does not wrap ErrInvalidSampler", tt.s, err)
		}
	}
}

// Next returns the distribution it sampled from: Softmax, then TopK, then
// TopP; and the token is what Sample draws from it with the same stream.
func TestSamplerNextReturnsSampledDistribution(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	logits := make([]float32, 500)
	for i := range logits {
		logits[i] = float32(rng.NormFloat64() * 2)
	}
	for _, s := range []Sampler{
		{},
		{Temperature: 1},
		{Temperature: 0.7, TopK: 10},
		{Temperature: 1, TopK: 1}, // top-1 is greedy
		{Temperature: 1.3, TopP: 0.9},
		{Temperature: 1, TopK: 50, TopP: 0.5},
	} {
		want := Softmax(nil, logits, s.Temperature)
		if s.Temperature > 0 {
			TopK(want, s.TopK)
			if s.TopP > 0 {
				TopP(want, s.TopP)
			}
		}
		a := rand.New(rand.NewPCG(13, 14))
		b := rand.New(rand.NewPCG(13, 14))
		tok, dist := s.Next(logits, a)
		if !slices.Equal(dist, want) {
			t.Errorf("%+v: returned distribution differs from Softmax+filters", s)
		}
		if wantTok := Sample(want, b); tok != wantTok {
			t.Errorf("%+v: token %d, want %d", s, tok, wantTok)
		}
		if dist[tok] <= 0 {
			t.Errorf("%+v: token %d has probability %v in the returned distribution", s, tok, dist[tok])
		}
		if (s.Temperature == 0 || s.TopK == 1) && tok != Argmax(logits) {
			t.Errorf("greedy token %d, want argmax %d", tok, Argmax(logits))
		}
	}
}

func TestSamplerNextEmpty(t *testing.T) {
	tok, dist := Sampler{Temperature: 1}.Next(nil, rand.New(rand.NewPCG(1, 1)))
	if tok != -1 || len(dist) != 0 {
		t.Fatalf("Next(nil) = %d, %v", tok, dist)
	}
}
