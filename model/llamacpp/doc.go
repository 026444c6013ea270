// Package llamacpp runs a GGUF model on llama.cpp's library (libllama,
// loaded at run time by internal/libllama: no cgo) behind hlm's model
// interface, so that hlm serve, sim, eval, generate, bench and the other
// commands can put the large model on llama.cpp's engine — its GPUs, its
// splits over several GPUs and its RPC servers on other hosts — while
// hybrid verification stays unchanged. A spec selects it:
// "PATH.gguf@llama.cpp" (model.LlamaCppOptions for its options).
package llamacpp
