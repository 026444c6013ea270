// Package train trains Llama-architecture decoders (the architecture
// model/llama runs: token embeddings, RMSNorm, rotary position embeddings,
// grouped-query attention, SwiGLU feed-forward, tied or separate classifier)
// in pure Go.
//
// The design follows llm.c: a forward pass over a batch of sequences keeps
// the activations the backward pass needs, and every operation has a
// hand-written backward next to its forward (ops.go). Everything is generic
// over the float type: float32 trains, float64 lets the tests check every
// gradient against central finite differences to ~1e-8.
//
// Determinism: each output element of every operation is computed by one
// goroutine in one fixed order, and reductions across goroutines (the
// gradient norm, the loss) run sequentially, so the same inputs give the same
// bits whatever the thread count (tensor.SetThreads). Products round to the
// float type before they are added (no fused multiply-add), as in the engine.
//
// AdamW with linear warmup and cosine decay, global-norm gradient clipping
// and frozen tensors live in adamw.go; checkpoints that resume bit for bit in
// checkpoint.go. Distillation from a teacher (the data, the losses on the
// teacher's distribution, the command) is package distill.
package train
