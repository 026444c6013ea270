package main

import "github.com/hlmproject/hlm/hybrid"

// The defaults every command shares, so that a flag means the same thing
// wherever it appears (hlm help lists them): the model is the built-in
// stories260K (model/builtin.DefaultLLM) with the draft hlm ships for it,
// prompts come from TinyStories (else the stories built into hlm), and runs generate
// hybrid.DefaultParams' max_tokens new tokens per prompt from its seed.
var (
	defaultMaxTokens        = hybrid.DefaultParams().MaxTokens
	defaultSeed      uint64 = hybrid.DefaultParams().Seed
)
