package sampling_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/hlmproject/hlm/sampling"
)

func ExampleSampler_Next() {
	logits := []float32{2.0, 1.0, 0.5, -1.0}
	s := sampling.Sampler{Temperature: 1, TopK: 2}
	if err := s.Validate(); err != nil {
		panic(err)
	}
	rng := rand.New(rand.NewPCG(42, 0))
	tok, dist := s.Next(logits, rng)
	fmt.Printf("token %d from %.3f\n", tok, dist)
	// Output: token 0 from [0.731 0.269 0.000 0.000]
}

func ExampleSoftmax() {
	// Temperature 0 is greedy: one-hot on the argmax, lowest id on ties.
	fmt.Println(sampling.Softmax(nil, []float32{1, 3, 3}, 0))
	fmt.Printf("%.3f\n", sampling.Softmax(nil, []float32{1, 3, 3}, 1))
	// Output:
	// [0 1 0]
	// [0.063 0.468 0.468]
}
