// Package llama is hlm's Llama-architecture decoder: RMSNorm, rotary
// position embeddings, grouped-query attention and a SwiGLU feed-forward, as
// in Llama 2, TinyLlama, llama2.c's stories models and TinyStories-656K.
//
// A Model holds one set of weights (Weights) and opens Sessions, each with its
// own KV cache. Session.Eval evaluates a block of new tokens in one pass and
// returns logits for every one of them (the server verifies a whole draft
// block this way); Session.Truncate rolls the cache back after a rejection.
// EvalBatch evaluates blocks of several sessions in one pass, sharing every
// weight read. Session.EvalTree evaluates a tree of drafts in one pass
// (tree attention: each node sees the cache and its ancestors), each
// node's logits bit-identical to its path's alone, and Session.KeepPath
// keeps the accepted chain. Early-exit views (the first n layers, the final norm and the
// head) and quantized copies make drafts that share the target's vocabulary.
//
// The forward pass is the reference-first kind: one function that reads like
// the architecture, with the arithmetic in package tensor. Evaluating a block
// gives bit-identical logits to evaluating its tokens one at a time, and the
// thread count never changes a result.
//
// Weights load from llama2.c checkpoints (legacy fp32 header), Hugging Face
// directories (config.json + safetensors, F32/F16/BF16, with the rotary q/k
// row permutation undone) and GGUF (F32, F16, BF16, Q8_0, Q4_0, Q5_0, Q4_K,
// Q6_K); see Open.
package llama
