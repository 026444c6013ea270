package sim_test

import (
	"context"
	"fmt"
	"log"

	"github.com/hlmproject/hlm/hybrid"
	"github.com/hlmproject/hlm/model/builtin"
	"github.com/hlmproject/hlm/sim"
)

// Run U-HLM on the pair hlm embeds (stories260K and its distilled draft)
// from Go, as `hlm sim --method u-hlm --max-tokens 24 --seed 7 --prompt
// "Once upon a time"` does: the parameters are set by the same names as
// `--set` and the wire form, and the run reproduces from its seed. Replace builtin.DefaultLLM by a file
// (a .gguf, a llama2.c .bin, PATH.gguf@llama.cpp) to use another LLM.
func ExampleRun() {
	p := hybrid.DefaultParams()
	if err := p.SetAll([]string{"method=u-hlm", "max_tokens=24", "seed=7"}); err != nil {
		log.Fatal(err)
	}
	sum, err := sim.Run(context.Background(), sim.Config{
		LLM:     builtin.DefaultLLM, // the SLM "" is the draft hlm ships for it
		Prompts: []string{"Once upon a time"},
		Params:  p,
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%q\n", sum.Text)
	fmt.Printf("%d tokens in %d rounds, %d uploaded\n", len(sum.Tokens), sum.Rounds, sum.Uploads)
	fmt.Printf("uplink %.0f bits/token, stop: %s\n", sum.BitsPerToken, sum.Stop)
	// Output:
	// ", there was a noisy dead. The deer was very pretty."
	// 24 tokens in 24 rounds, 13 uploaded
	// uplink 4724 bits/token, stop: max tokens
}
