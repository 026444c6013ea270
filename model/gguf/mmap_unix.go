//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd

package gguf

import (
	"errors"
	"os"
	"syscall"
)

// mmap maps the first size bytes of f read-only.
func mmap(f *os.File, size int64) ([]byte, error) {
	if size <= 0 || int64(int(size)) != size {
		return nil, errors.New("gguf: cannot map a file of this size")
	}
	return syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
}

func munmap(b []byte) error { return syscall.Munmap(b) }
