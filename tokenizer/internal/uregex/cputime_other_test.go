//go:build !linux

package uregex

func processCPU() (float64, bool) { return 0, false }
