package main

import (
	"errors"
	"flag"
	"strconv"
)

// threadsVar declares --threads and its short name -t (llama.cpp's, which
// its users type) on p: a count of worker threads, 0 for all cores, never
// negative.
func threadsVar(fs *flag.FlagSet, p *int, usage string) {
	fs.Var((*threadsValue)(p), "threads", usage)
	alias(fs, "t", "threads")
}

// alias declares short as another name of fs's flag long (the short names
// llama.cpp's tools use, which their users type: -m, -p, -n, -f, -s): the
// same value, shown in --help as "same as --long".
func alias(fs *flag.FlagSet, short, long string) {
	f := fs.Lookup(long)
	if f == nil {
		panic("hlm: alias -" + short + " of an undeclared flag --" + long)
	}
	fs.Var(f.Value, short, aliasUsage(long))
}

// aliasUsage is the usage of an alias of flag long, by which isSet knows
// it.
func aliasUsage(long string) string { return "same as --" + long }

// isSet reports whether fs's flag name was given on the command line, under
// that name or an alias's.
func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name || f.Usage == aliasUsage(name) })
	return set
}

// threadsFlag is threadsVar on a new int.
func threadsFlag(fs *flag.FlagSet, usage string) *int {
	p := new(int)
	threadsVar(fs, p, usage)
	return p
}

type threadsValue int

func (v *threadsValue) String() string { return strconv.Itoa(int(*v)) }

func (v *threadsValue) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return errors.New("want a whole number of threads, 0 for all cores")
	}
	*v = threadsValue(n)
	return nil
}
