package uncertainty_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/hlmproject/hlm/uncertainty"
)

func ExamplePerturbation_Measure() {
	p := uncertainty.Perturbation{M: 20, ThetaMax: 2}
	confident := []float32{8, 1, 0.5, 0.2}
	torn := []float32{2, 1.9, 1.8, 1.7}
	rng := rand.New(rand.NewPCG(1, 2))
	fmt.Println(p.Measure(confident, 0, rng))
	fmt.Println(p.Measure(torn, 0, rng))
	// Output:
	// 0
	// 0.85
}

func ExampleLinear_RiskProne() {
	// CU-HLM Sec. III-C: a = 0.815, b = −0.066, Δ = 0.5956.
	fit := uncertainty.Linear{A: 0.815, B: -0.066}
	fmt.Printf("risk-prone u_th = %.4f\n", fit.RiskProne(0.5956))
	fmt.Printf("risk-averse u_th = %.4f\n", fit.RiskAverse())
	fmt.Printf("Hölder factor Δ^1.5/sqrt(3a) = %.4f\n", uncertainty.HolderLinearFactor(fit.A, 0.5956))
	// Output:
	// risk-prone u_th = 0.8118
	// risk-averse u_th = 0.0810
	// Hölder factor Δ^1.5/sqrt(3a) = 0.2940
}
