//go:build !(darwin || dragonfly || freebsd || linux || netbsd || openbsd)

package gguf

import (
	"errors"
	"os"
)

// mmap is not available on this platform; Open reads the file instead.
func mmap(*os.File, int64) ([]byte, error) {
	return nil, errors.New("gguf: mmap not supported on this platform")
}

func munmap([]byte) error { return nil }

func dontNeed([]byte) {}
