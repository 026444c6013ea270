//go:build !((linux || darwin) && (amd64 || arm64))

package libllama

import (
	"fmt"
	"runtime"
)

func bind(l *Lib, path string) error {
	return fmt.Errorf("%w (%s/%s): purego passes C structs by value only on linux and darwin, amd64 and arm64", ErrUnavailable, runtime.GOOS, runtime.GOARCH)
}

func callPtrString(fn uintptr, s string) uintptr { return 0 }

func registerAt(fn any, addr uintptr) {}

func logCallback() uintptr { return 0 }

type abortState struct{}

// SetAbort is unavailable on this platform.
func (c *Context) SetAbort(fn func() bool) {}
