package model

import "testing"

func TestMaxMACsRatio(t *testing.T) {
	teacher := Config{Dim: 64, Hidden: 172, Layers: 5, Heads: 8, KVHeads: 4, Vocab: 512, SeqLen: 512}
	for _, tc := range []struct {
		name    string
		student Config
	}{
		{"deep narrow attention grows faster", Config{Dim: 64, Hidden: 48, Layers: 2, Heads: 8, KVHeads: 4, Vocab: 512}},
		{"one layer", Config{Dim: 64, Hidden: 172, Layers: 1, Heads: 8, KVHeads: 4, Vocab: 512}},
		{"narrow", Config{Dim: 48, Hidden: 160, Layers: 2, Heads: 8, KVHeads: 4, Vocab: 512}},
		{"the teacher itself", teacher},
	} {
		got, pos := tc.student.MaxMACsRatio(teacher, teacher.SeqLen)
		want, wantPos := 0.0, 0
		for p := 0; p < teacher.SeqLen; p++ {
			if r := float64(tc.student.MACs(p)) / float64(teacher.MACs(p)); r > want {
				want, wantPos = r, p
			}
		}
		if got != want || pos != wantPos {
			t.Errorf("%s: MaxMACsRatio = %.6f at %d, brute force %.6f at %d", tc.name, got, pos, want, wantPos)
		}
	}
}
