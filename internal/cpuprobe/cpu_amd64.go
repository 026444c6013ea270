//go:build amd64 && !purego

package cpuprobe

import "golang.org/x/sys/cpu"

//go:generate go run gen_probes.go

// supported reports whether the CPU has the AVX-512 subsets the probes
// use (F, BW, VL, VNNI), with the operating system saving their state.
func supported() bool {
	x := cpu.X86
	return x.HasAVX512F && x.HasAVX512BW && x.HasAVX512VL && x.HasAVX512VNNI
}

// supportedAVX2 reports whether the CPU has AVX2 and FMA (the AVX2
// probes), with the operating system saving their state.
func supportedAVX2() bool {
	x := cpu.X86
	return x.HasAVX2 && x.HasFMA
}
