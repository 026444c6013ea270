package main

import (
	"flag"
	"fmt"
	"strings"

	"github.com/hlmproject/hlm/internal/words"
)

// withSuggestion adds to the flag package's "flag provided but not
// defined: -promt" the defined flag nearest to it, when one is near.
func withSuggestion(fs *flag.FlagSet, err error) error {
	name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: -")
	if !ok {
		return err
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
