package hybrid

import (
	"errors"
	"math"
)

// ErrReplicaMismatch reports that the hash of the server's draft logits
// (its copy of the draft model) is not the one the device sent: a
// different draft model or numerics, or session parameters on which the
// two sides disagree (a key the server needs that is not sent in the
// session's parameters, Key.wire). Standard verification against the
// server's x̂ would no longer be lossless, so the server refuses the block.
var ErrReplicaMismatch = errors.New("hybrid: replica numerics mismatch: the server's draft logits differ from the device's (another draft model or numerics, or session parameters the two sides disagree on)")

// checkBits is what the replica check costs on the uplink per block.
const checkBits = 64

// checkSeed starts a block's hash (FNV-1a offset basis).
const checkSeed uint64 = 0xcbf29ce484222325

// checkLogits folds the exact float32 bits of one position's draft logits
// into h (FNV-1a over the little-endian bytes). Any difference in the draft
// computation, however small, changes the hash.
func checkLogits(h uint64, logits []float32) uint64 {
	const prime = 0x100000001b3
	for _, v := range logits {
		b := math.Float32bits(v)
		for i := 0; i < 4; i++ {
			h ^= uint64(byte(b >> (8 * i)))
			h *= prime
		}
	}
	return h
}
