//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd

package gguf

import (
	"errors"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// mmap maps the first size bytes of f read-only, in huge pages where the
// system takes the advice (adviseHugePages).
func mmap(f *os.File, size int64) ([]byte, error) {
	if size <= 0 || int64(int(size)) != size {
		return nil, errors.New("gguf: cannot map a file of this size")
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err == nil {
		adviseHugePages(b)
	}
	return b, err
}

func munmap(b []byte) error { return syscall.Munmap(b) }

// dontNeed drops b's pages (whole pages of a read-only shared file
// mapping) from the resident set; reading them again faults them back in
// from the file.
func dontNeed(b []byte) { _ = unix.Madvise(b, unix.MADV_DONTNEED) }
