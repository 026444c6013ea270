package main

import (
	"flag"
	"fmt"
	"strings"

	"github.com/hlmproject/hlm/internal/words"
)

// retiredFlags says, for a command's flag that hlm once had ("command
// flag"), why it is gone and what to do instead.
var retiredFlags = map[string]string{
	"convert packed": "it was removed on 2026-12-02 with the prepacked GGUF types it wrote: hlm packs a row-major file's matrices itself, behind its first products, and starts as fast; convert without it",
}

// withSuggestion adds to the flag package's "flag provided but not
// defined: -promt" the defined flag nearest to it, when one is near, or
// why a retired flag is gone (retiredFlags).
func withSuggestion(fs *flag.FlagSet, err error) error {
	name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: -")
	if !ok {
		return err
	}
	if why, ok := retiredFlags[fs.Name()+" "+name]; ok {
		return fmt.Errorf("--%s: %s", name, why)
	}
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	if s := words.Closest(name, names); s != "" {
		dash := "--"
		if len(s) == 1 {
			dash = "-"
		}
		return fmt.Errorf("%w; did you mean %s%s?", err, dash, s)
	}
	return err
}
