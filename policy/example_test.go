package policy_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/hlmproject/hlm/policy"
)

func ExampleParse() {
	up, err := policy.Parse("u+i:k=3,gamma=1")
	if err != nil {
		panic(err)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	attention := []float32{0.3, 0.02, 0.25, 0.02, 0.02, 0.28, 0.02, 0.02, 0.03, 0.02, 0.02}
	fmt.Println(up)
	fmt.Println(up.Upload(policy.Token{U: 0.6, Attention: attention}, rng))
	fmt.Println(up.Upload(policy.Token{U: 0.2, Attention: attention}, rng))
	// Output:
	// u+i:u_th=0.431,k=3,gamma=1
	// true
	// false
}

func ExampleHeuristic() {
	h := policy.DefaultHeuristic()
	for _, accepted := range []int{4, 5, 2, 0} {
		l := h.Next()
		h.Observe(l, min(accepted, l))
		fmt.Print(l, " ")
	}
	fmt.Println(h.Next())
	// Output: 4 5 6 2 1
}
