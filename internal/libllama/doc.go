// Package libllama binds llama.cpp's C library (libllama) at run time,
// without cgo: github.com/ebitengine/purego opens the shared library and
// calls its functions with the platform's C calling convention, so every hlm
// binary — CGO_ENABLED=0 included — can use llama.cpp's engine where its
// library is installed, and none needs it otherwise.
//
// # What is bound
//
// Only what hlm's llama.cpp backend (model/llamacpp) uses: loading a model
// and a context, the vocabulary, llama_decode over a batch of several
// sequences, the logits of chosen positions, dropping positions of a
// sequence (llama_memory_seq_rm), saving and restoring one sequence's state
// (llama_state_seq_*), the RPC backend's servers, and the version. The
// structs passed by value (llama_model_params, llama_context_params,
// llama_batch) are Go structs laid out as C lays them out on LP64
// platforms (offsets in comments, pinned by a test).
//
// # Versions
//
// The layouts are those of include/llama.h of llama.cpp 0.5.0 (commit
// de3ff81, the source internal/libllama/build.sh builds), unchanged from
// 0.4.0 (commit 80fb11a; the binding's tests pass with it too:
// LIBLLAMA_PKG=node-llama-cpp@3.21.1 build.sh builds it). Open refuses any
// other library with an error naming the supported range
// (SupportedVersions): llama_version() must be 0.4.x or 0.5.x, and the sizes of
// llama_model_params and llama_context_params — measured by calling the
// library's own llama_*_default_params into a guarded buffer — and their
// default values at the pinned offsets must be this header's. A library
// whose structs moved would otherwise be called with garbage and crash.
//
// # Errors
//
// Every failure is an error, never a panic or an abort of the process that
// hlm could prevent: a missing or foreign library (ErrLibrary), an
// unsupported version (ErrVersion), a model llama.cpp cannot load
// (ErrLoad, with llama.cpp's own last error lines), and llama_decode's
// return codes (DecodeError: 1 no KV slot, 2 aborted, -1 invalid batch,
// < -1 fatal). llama.cpp's log goes to a small buffer whose last error
// lines the errors quote; HLM_LLAMA_LOG=1 copies it to stderr.
//
// The package is available on linux and darwin, amd64 and arm64 (where
// purego passes structs by value); elsewhere Open returns ErrUnavailable.
// Only linux/amd64 was tested.
package libllama
