// Package engine opens a model spec on the engine the spec names: hlm's
// own (model/llama, the default) or llama.cpp's library (model/llamacpp,
// for a spec with "@llama.cpp"). Commands that need only the model
// interface open their models here; those that need hlm's engine itself
// (weights to write or train, early-exit and quantized views, the
// server-side replica of a draft) call model/llama, which refuses a
// llama.cpp spec with its reason.
package engine

import (
	"github.com/hlmproject/hlm/model"
	"github.com/hlmproject/hlm/model/llama"
	"github.com/hlmproject/hlm/model/llamacpp"
)

// Open opens spec on its engine.
func Open(spec model.Spec) (model.Model, error) {
	if spec.Backend == model.BackendLlamaCpp {
		m, err := llamacpp.Open(spec)
		if err != nil {
			return nil, err
		}
		return m, nil
	}
	m, err := llama.Open(spec)
	if err != nil {
		return nil, err
	}
	return m, nil
}

// OpenSpec parses a spec and opens it on its engine; tokenizerPath, when
// not empty, names the tokenizer.
func OpenSpec(s, tokenizerPath string) (model.Model, error) {
	sp, err := model.ParseSpec(s)
	if err != nil {
		return nil, err
	}
	sp.Tokenizer = tokenizerPath
	return Open(sp)
}
