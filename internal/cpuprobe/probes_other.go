//go:build !amd64 || purego

package cpuprobe

var probes []Probe

func chain(n int) int {
	s := 0
	for i := 0; i < 8*n; i++ {
		s++
	}
	return s
}

func supported() bool { return false }

func supportedAVX2() bool { return false }
