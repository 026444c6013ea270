package codec_test

import (
	"fmt"
	"log"
	"math"

	"github.com/hlmproject/hlm/hybrid"
)

// Encode one draft distribution over a vocabulary of 32,000 with the
// codec of each method, built from the run parameters as the device and
// the server build it (hybrid.Codec), and count the uplink bits. The
// server's Decode gives back Recon bit for bit: the distribution the
// device samples and verifies against.
func Example() {
	const V = 32000
	x := make([]float64, V) // a Zipf-like draft distribution
	var sum float64
	for i := range x {
		x[i] = 1 / math.Pow(float64(i+1), 1.2)
		sum += x[i]
	}
	for i := range x {
		x[i] /= sum
	}
	for _, method := range []string{hybrid.HLM, hybrid.CUHLMOffline, hybrid.QS, hybrid.KSQS} {
		p := hybrid.DefaultParams() // prob_bits=8 with indices, k=30, ell=100, sqs_k=8
		if err := p.Set("method", method); err != nil {
			log.Fatal(err)
		}
		c, err := hybrid.Codec(p)
		if err != nil {
			log.Fatal(err)
		}
		// Top-k carries a draft sampled from the SLM (CU-HLM); the others
		// sample it from Recon after encoding (quantize, then sample): -1.
		draft := -1
		if method == hybrid.CUHLMOffline {
			draft = 0
		}
		enc, err := c.Encode(x, draft)
		if err != nil {
			log.Fatal(err)
		}
		back, err := c.Decode(enc.Payload, V)
		if err != nil {
			log.Fatal(err)
		}
		same := len(back) == len(enc.Recon)
		for i := range back {
			same = same && back[i] == enc.Recon[i]
		}
		fmt.Printf("%-14s %-16s %7d bits  decoded = Recon: %v\n", method, c.Name(), enc.Bits, same)
	}
	// Output:
	// hlm            full-8-idx        736000 bits  decoded = Recon: true
	// cu-hlm-offline topk-30-8            691 bits  decoded = Recon: true
	// q-s            lattice-100          973 bits  decoded = Recon: true
	// k-sqs          ksqs-8-100           140 bits  decoded = Recon: true
}
