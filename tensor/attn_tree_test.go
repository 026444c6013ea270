package tensor

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestWeightedSumAddContinues: WeightedSum over the first k rows, then
// WeightedSumAdd over the rest one run at a time (from other buffers),
// gives WeightedSum's bits over all rows, at every level, for every split.
func TestWeightedSumAddContinues(t *testing.T) {
	rng := rand.New(rand.NewPCG(61, 62))
	for _, hs := range []int{1, 8, 15, 16, 24, 48, 64, 100} {
		for _, n := range []int{1, 2, 7, 9, 33} {
			stride := hs + 3
			v := randVec(rng, n*stride+hs)
			a := randVec(rng, n)
			a[0] = 0 // a zero weight and a negative zero product
			v[(n-1)*stride] = float32(math.Copysign(0, -1))
			for _, l := range levels() {
				atLevel(l, func() {
					want := make([]float32, hs)
					WeightedSum(want, a, v, stride)
					for k := 0; k <= n; k++ {
						got := make([]float32, hs)
						WeightedSum(got, a[:k], v, stride)
						// The rest in runs of one and two rows, copied
						// elsewhere as a node's ancestors are.
						for t := k; t < n; t += 2 {
							e := min(t+2, n)
							rows := append([]float32(nil), v[t*stride:(e-1)*stride+hs]...)
							WeightedSumAdd(got, a[t:e], rows, stride)
						}
						for i := range got {
							if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
								t.Fatalf("%s hs=%d n=%d split %d: sum %d = %g, want %g", levelNames[l], hs, n, k, i, got[i], want[i])
							}
						}
					}
				})
			}
		}
	}
}
