// Package llamacpp runs a GGUF model on llama.cpp's library (libllama,
// loaded at run time by internal/libllama: no cgo) behind hlm's model
// interface, so that hlm serve, loadtest, sim, eval, calibrate,
// acceptance, train-ddqn, generate, bench and nll can put the large model
// on llama.cpp's engine — its GPUs, its splits over several GPUs and its
// RPC servers on other hosts — while hybrid verification stays unchanged.
//
// # Using it
//
// A spec selects it: "PATH.gguf@llama.cpp", with llama.cpp's own flag
// names as options (model.LlamaCppOptions): "@ngl=99@sm=row@ts=3,1@np=8".
// The library comes from --llama-lib, $HLM_LLAMA_LIB, or the one
// internal/libllama/build.sh built ($HLM_PEERS/libllama/current). Loading
// checks llama.cpp's version and struct layouts (internal/libllama), then
// llama.cpp's vocabulary against hlm's tokenizer of the same file (size,
// BOS, EOS, every token's text, every end-of-generation flag): a mismatch
// refuses the model.
//
// # How sessions map to llama.cpp
//
// One llama_context with np sequences (kv_unified off: a stream each), c
// positions each. A session takes a sequence when it first evaluates;
// Truncate is llama_memory_seq_rm; a session that is closed or collected
// gives its sequence back. When more sessions evaluate than there are
// sequences, the least recently used idle one is saved out of the context
// (llama_state_seq_get_data) and restored when it returns; a model with
// sliding-window layers is evaluated again from its tokens instead, since
// llama.cpp's saved state of such a cache does not restore the same
// logits (measured on gemma3: off by up to 8). EvalBatch puts every
// session's block in llama_decode calls planned so that no block is cut
// across micro-batches (Model.plan). The model is safe for concurrent use:
// one mutex serialises the context. EvalBatchView leaves the rows of a
// batch's last llama_decode in llama.cpp's own buffer instead of copying
// them (hlm serve's batches, whose verifications read them in place),
// holding back every other evaluation until ReleaseView.
//
// # The determinism contract
//
// Under the settings hlm chooses — kv_unified off, a micro-batch (ub,
// 512) no smaller than a round, blocks of equal length decoded together and
// one-token blocks alone, flash attention off, llama.cpp's CPU weight
// repacking off — a session's logits are bit-identical
//
//   - alone or batched with other sessions whose blocks have other lengths,
//   - on 1 or 2 threads,
//   - with its cache evicted and brought back (saved and restored, or
//     evaluated again),
//   - with or without the rows it skips (EvalBatchSkip, EvalSkip: a
//     server's first round reads the rows of the device's block, not of
//     the prompt before it; a lone wanted row of a block is computed with
//     a neighbour, see piece.outputs),
//   - after rollback: rejected drafts leave no trace,
//   - and after a resume: a new session prefilled with the same tokens in
//     one block continues with the same logits as the session that
//     evaluated them round by round, so a restarted hlm serve continues a
//     device's generation bit-exactly,
//
// measured on this project's CPU (AMD EPYC, Zen 4, AVX-512; llama.cpp
// 0.5.0 de3ff81) for F32, F16 and Q8_0 weights of three families (one with
// sliding windows: TestDeterminismContract) and at real shapes for
// Qwen3-0.6B Q8_0 and Llama-3.2-1B Q4_K_M (TestDeterminismRealShapes);
// every test of this package passes with llama.cpp 0.4.0 (80fb11a) too,
// on a Zen 1 (AVX2).
// Through purego the logits are those of llama.cpp's own C harness on the
// same library, bit for bit, and over an RPC server those of the local
// CPU (TestFamilies, TestRPC).
//
// What breaks it, measured so that the contract is not assumed
// (TestDeterminismBreakers, TestDeterminismRealShapes): with F16 and F32
// weights one token alone takes another path through llama.cpp's matrix
// products than a token in a block, so a session whose cache was filled
// one token at a time (hlm generate; a token-by-token prefill) differs in
// the last bits from one filled in blocks, and one-token rounds batched
// together would differ from alone (hence decoded alone); a micro-batch
// smaller than a round; flash attention (fa=on) makes the logits depend on
// the blocks' shapes, though not on batching; weight repacking (repack=on,
// llama-bench's and llama-server's default) makes a token's logits depend
// on its place in the micro-batch (Llama-3.2-1B Q4_K_M: batched and alone
// differ by up to 0.23). A unified KV cache breaks batching invariance too
// (the feasibility probe; hlm does not offer it).
//
// On a GPU the contract does not hold. llama.cpp's maintainers do not
// promise batch invariance (tools/server/README.md on cache_prompt; PR
// #6950; issue #20063 for CUDA), and on an NVIDIA H200 (CUDA 13.0, every
// layer on the GPU; bench/gpu.sh runs these tests with HLM_TEST_NGL=99)
// batched and alone differed by up to 0.78, a resumed session by up to
// 0.31, an evicted and restored one by up to 0.77, and the logits were
// within 3.6e-3 of the range of hlm's engine's rather than 1.2e-6. A
// session alone repeats its logits run to run. So on a GPU hlm serve stays
// lossless (cloud's TestLlamaCppLossless passed there) but a resume
// continues with other logits, and a simulator does not repeat a batched
// server's tokens. The tests open their models on the CPU (ngl=0) unless
// HLM_TEST_NGL says otherwise, so that a library built for a GPU is tested
// against the contract as stated.
//
// llama.cpp's logits are not hlm's engine's: with an F32 KV cache they
// agree to 1.2e-6 of the logits' range on the Llama-like families and
// 1e-3 on the GELU ones (llama.cpp's fp16 GELU table); with llama.cpp's
// default F16 cache to 2.7e-3. So what needs the same bits on two engines
// stays on hlm's: the replica method (hlm serve refuses a @llama.cpp
// --replica), and token identity between a simulator on hlm's engine and
// a server on llama.cpp (a simulator on the same llama.cpp model gives
// the server's tokens: cloud's TestLlamaCppSimMatchesNetwork). Coupling's
// drafter invariance (hybrid tokens ≡ LLM-only tokens) needs the LLM's
// logits at a position to be the same from a one-token pass and from a
// block: true here for Q8_0 and Q4_K_M without repacking, not for F16 and
// F32 weights, where it holds only up to last-bit ties. Losslessness
// itself needs none of this: it is tested statistically through hlm serve
// (cloud's TestLlamaCppLossless).
//
// # What it does not offer
//
// llama.cpp's library exposes logits, not attention probabilities, hidden
// states, dropout or early exits: attention capture (U+I's importance)
// fails with ErrNoAttention, sessions have no SetDropout (MC dropout says
// so), and "@exit=N" or "@q8" with "@llama.cpp" is refused by the spec
// parser, each error naming hlm's engine as the way.
package llamacpp
