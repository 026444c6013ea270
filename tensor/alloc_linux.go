//go:build linux

package tensor

import "golang.org/x/sys/unix"

// allocPacked returns n zeroed bytes for a packed copy of a matrix. Copies
// of hugeMin or more are mapped outside the Go heap with MADV_HUGEPAGE, so
// that the kernel backs them with 2 MiB pages where it can: filling them
// then takes one fault per 2 MiB instead of per 4 KiB
// (Llama-3.1-8B Q8_0 loaded, packed and ran two one-token passes in
// 8.3 / 6.9 s against 13.5 / 8.4 s on the Go heap; docs/BENCHMARKS.md,
// "Not done yet"). freePacked gives them back; smaller ones, and any the
// kernel refuses, are ordinary slices.
func allocPacked(n int) []byte {
	if n < hugeMin {
		return make([]byte, n)
	}
	b, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return make([]byte, n)
	}
	_ = unix.Madvise(b, unix.MADV_HUGEPAGE) // advice only: THP may be off
	return b
}

// freePacked unmaps b if allocPacked mapped it: unix.Munmap refuses (and
// leaves alone) a slice it did not map, such as a large copy whose mapping
// the kernel refused.
func freePacked(b []byte) {
	if len(b) >= hugeMin {
		_ = unix.Munmap(b)
	}
}
