//go:build !linux

package gguf

// adviseHugePages does nothing: MADV_HUGEPAGE is Linux's
// (hugepages_linux.go).
func adviseHugePages([]byte) {}
