package hybrid

import "github.com/hlmproject/hlm/codec"

// What the device needs of a codec beyond codec.Codec, asked of the codec
// itself rather than of its type: a new codec with one of these
// capabilities works with every method whose drafting uses it.

// budgeted is a codec whose payload size for a distribution is known
// before encoding it, so that a batch can be filled to a bit budget (SQS
// Sec. 4: L^t = max{L : Σ b_n ≤ B}; k-sqs, c-sqs).
type budgeted interface {
	BudgetBits(x []float64) (int, error)
}

// batched is a codec with state across the drafts of a batch that the
// verdict settles (C-SQS's threshold, SQS Algorithm 1 lines 2 and 11).
type batched interface {
	BeginBatch()
	EndBatch(accepted int) error
}

// thresholded is a codec with an adaptive threshold the simulator
// reports per batch (C-SQS's β).
type thresholded interface {
	Threshold() float64
}

// resolvable is a codec whose resolution a controller chooses per round,
// carried in its payload (draft=ddqn; Q-S Sec. IV-B).
type resolvable interface {
	AtResolution(ell int) (codec.Codec, error)
}

// predictive is a codec that uses the draft's predicted rejection
// probability (CU-HLM eq. 24's online top-k).
type predictive interface {
	EncodePredicted(x []float64, draft int, beta float64) (codec.Encoded, error)
}
