//go:build !amd64

package main

// mixes is empty off amd64: the mixes are AVX2 instructions.
var mixes []mix
