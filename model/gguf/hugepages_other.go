//go:build !linux

package gguf

// adviseHugePages does nothing: MADV_HUGEPAGE is Linux's
// (hugepages_linux.go).
func adviseHugePages([]byte) {}

// mappedWhole reports false: without Linux's smaps there is no telling
// (File.MappedWhole).
func mappedWhole([]byte) bool { return false }
