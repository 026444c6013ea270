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
	fs.Var((*threadsValue)(p), "t", "same as --threads")
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
