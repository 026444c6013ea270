//go:build !linux

package tensor

// allocPacked returns n zeroed bytes for a packed copy of a matrix (on
// Linux, large ones are mapped with huge pages: alloc_linux.go).
func allocPacked(n int) []byte { return make([]byte, n) }

// freePacked gives back what allocPacked returned.
func freePacked([]byte) {}
