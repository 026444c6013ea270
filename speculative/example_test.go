package speculative_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/hlmproject/hlm/sampling"
	"github.com/hlmproject/hlm/speculative"
)

func ExampleVerify() {
	x := []float64{0.6, 0.3, 0.1} // device (SLM)
	y := []float64{0.3, 0.3, 0.4} // server (LLM)
	rng := rand.New(rand.NewPCG(1, 2))
	draft := sampling.Sample(x, rng)
	tok, accepted := speculative.Verify(x, y, draft, rng)
	fmt.Println(draft, tok, accepted)
	fmt.Printf("acceptance probability %.2f\n", speculative.AcceptProb(x, x, y))
	// Output:
	// 1 1 true
	// acceptance probability 0.70
}

func ExampleOutputDist() {
	x := []float64{0.6, 0.3, 0.1}
	y := []float64{0.3, 0.3, 0.4}
	// CU-HLM top-1 upload: keep 0.6, spread 0.4 over the other two tokens.
	// Verifying drafts from x against xhat (sample, then compress) moves
	// mass from token 2 to token 1; drafting from xhat itself (quantize,
	// then sample) is lossless.
	xhat := []float64{0.6, 0.2, 0.2}
	fmt.Printf("lossless %.3f\n", speculative.OutputDist(x, x, y))
	fmt.Printf("S-Q      %.3f\n", speculative.OutputDist(x, xhat, y))
	fmt.Printf("Q-S      %.3f\n", speculative.OutputDist(xhat, xhat, y))
	// Output:
	// lossless [0.300 0.300 0.400]
	// S-Q      [0.300 0.400 0.300]
	// Q-S      [0.300 0.300 0.400]
}
