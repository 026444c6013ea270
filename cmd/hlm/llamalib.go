package main

import (
	"flag"

	"github.com/hlmproject/hlm/model/llamacpp"
)

// addLlamaLibFlag declares --llama-lib: the libllama that model specs
// ending in @llama.cpp run on.
func addLlamaLibFlag(fs *flag.FlagSet) {
	fs.Func("llama-lib", "llama.cpp's `libllama.so` for model specs with @llama.cpp (default: $"+llamacpp.EnvLibrary+", else the one internal/libllama/build.sh built)", func(p string) error {
		llamacpp.SetLibrary(p)
		return nil
	})
}
