package speculative

import (
	"errors"
	"fmt"
	"math"

	"github.com/hlmproject/hlm/tensor"
)

// List matching: K coupled drafts per position (Rowan, Phan, Khisti 2025).
//
// Draft k has its own keyed noise E_k(p, i) (E_0 is the noise of
// CoupledSample, so K = 1 is plain coupling). The device drafts K sequences
// of L tokens, each by coupled sampling along its own prefix:
// d_{k,l} = argmin_i E_k(start+l, i)/x(prefix_k)(i). The server keeps a set
// S of surviving drafts (all K at first) and at each position takes
//
//	s = argmin_i min_{k∈S} E_k(p, i)/y(i),
//
// the winner of a race among |S| independent exponentials per token: it is
// distributed exactly as y (S depends only on earlier positions), so the
// output is lossless. Drafts whose token differs from s drop out; the block
// stops at the first position where none is left, committing s, and
// commits the bonus s_{L+1} when some draft survives all L positions. More
// drafts raise the chance that one matches, at K·L token ids per block on the
// uplink. Unlike K = 1, the committed tokens then depend on the drafts (S
// does), so drafter invariance holds only in distribution.
//
// y is needed only along the committed path: every survivor shares it.

// ListNoiseExp is E_k(seed, pos, tok), the noise of draft k; draft 0's is
// NoiseExp(seed, pos, tok).
func ListNoiseExp(seed uint64, k, pos, tok int) float64 {
	return NoiseExp(listSeed(seed, k), pos, tok)
}

func listSeed(seed uint64, k int) uint64 {
	if k == 0 {
		return seed
	}
	return mix64(seed ^ mix64(uint64(k)*0xd1b54a32d192ed03))
}

// raceWinner is argmin_i E_k(pos, i)/p_i over tokens with p_i > 0 (the
// lowest id on ties), and its score; −1 and +Inf when p has no mass.
//
// E = −log1p(−u) ≥ u, so a token whose u/p is already no better than the
// best score cannot win and its logarithm is skipped (the bound is shrunk by
// 2⁻⁴⁰, far more than log1p's rounding error, so no possible winner is
// skipped: the result is exactly the full scan's).
//
// From tensor.ShareMin tokens on, chunks race on the threads
// (tensor.ShareChunks) and their winners are compared in chunk order: a
// chunk's winner is the full scan's over the chunk (the skip above never
// drops a possible winner, whatever best score a chunk starts from), so the
// result is the same — for the server on a GPU, where a round's race is on
// its critical path.
func raceWinner(p []float64, seed uint64, k, pos int) (int, float64) {
	key := noiseKey(listSeed(seed, k))
	if len(p) < tensor.ShareMin {
		return raceRange(p, key, pos, 0)
	}
	type win struct {
		tok   int
		score float64
	}
	wins := make([]win, (len(p)+tensor.ShareChunk-1)/tensor.ShareChunk)
	if !tensor.ShareChunks(len(p), 8*len(p), func(lo, hi int) {
		w := &wins[lo/tensor.ShareChunk]
		w.tok, w.score = raceRange(p[lo:hi], key, pos, lo)
	}) {
		return raceRange(p, key, pos, 0)
	}
	best, bestScore := -1, math.Inf(1)
	for _, w := range wins {
		if w.score < bestScore {
			best, bestScore = w.tok, w.score
		}
	}
	return best, bestScore
}

// raceRange is raceWinner's scan over p, the probabilities of tokens
// off, off+1, …. Where the kernel level has a vector filter (raceKernel),
// it skips the runs of tokens whose u·raceLoose ≥ best·p_i — which the
// exact test below would skip too, raceLoose leaving room for every
// rounding — so only the groups holding a possible winner are scanned one
// by one, and the result is exactly the one-by-one scan's.
func raceRange(p []float64, key uint64, pos, off int) (int, float64) {
	best, bestScore := -1, math.Inf(1)
	const shrink = 1 - 0x1p-40
	pmix := uint64(pos) * 0x9e3779b97f4a7c15
	filter, lanes := raceKernel()
	if uint64(off)+uint64(len(p)) > 1<<32 {
		lanes = 0 // token ids beyond uint32: keyedUniform's truncation
	}
	for i := 0; i < len(p); {
		end := len(p)
		if lanes > 0 {
			if n := (len(p) - i) &^ (lanes - 1); n > 0 {
				i += filter(&p[i], n, key, pmix, off+i, bestScore, raceLoose)
			}
			end = min(i+lanes, len(p))
		}
		for ; i < end; i++ {
			pi := p[i]
			if !(pi > 0) {
				continue
			}
			u := keyedUniform(key, pos, off+i)
			if u*shrink/pi >= bestScore {
				continue
			}
			if sc := -math.Log1p(-u) / pi; sc < bestScore {
				best, bestScore = off+i, sc
			}
		}
	}
	return best, bestScore
}

// raceFilter is a vector filter of the race (race_amd64.s): over p[:n],
// n a multiple of its lanes, the length of the leading run of tokens
// tok0, tok0+1, … with no u·loose < s·p_i.
type raceFilter func(p *float64, n int, key, pmix uint64, tok0 int, s, loose float64) int

// raceLoose is the vector filter's shrink (raceKernel): that of raceRange's
// exact test, 1 − 2⁻⁴⁰, shrunk again by 2⁻⁴⁵ so that the filter's
// u·raceLoose < s·p_i (two roundings) holds for every token whose exact
// u·shrink/p_i < s (two roundings) holds.
const raceLoose = (1 - 0x1p-40) * (1 - 0x1p-45)

// DistAt returns a model's next-token distribution after the committed
// context followed by prefix (the tokens drafted or accepted so far in this
// block). Implementations may cache by prefix.
type DistAt func(prefix []int) ([]float64, error)

// ErrNoMass reports a distribution with no positive entry.
var ErrNoMass = errors.New("speculative: distribution has no mass")

// ListDrafts drafts K sequences of L tokens by coupled sampling with the
// noise of each draft; start is the absolute position of the first draft.
// x is called once per drafted token, draft by draft and position by
// position, so drafts that share a prefix ask for it again: an x that is
// costly to evaluate should cache by prefix.
func ListDrafts(x DistAt, K, L int, seed uint64, start int) ([][]int, error) {
	if K < 1 || L < 1 {
		return nil, fmt.Errorf("speculative: ListDrafts: K = %d, L = %d, want both >= 1", K, L)
	}
	drafts := make([][]int, K)
	for k := range drafts {
		d := make([]int, 0, L)
		for l := 0; l < L; l++ {
			p, err := x(d)
			if err != nil {
				return nil, err
			}
			tok, _ := raceWinner(p, seed, k, start+l)
			if tok < 0 {
				return nil, fmt.Errorf("draft %d, position %d: %w", k, l, ErrNoMass)
			}
			d = append(d, tok)
		}
		drafts[k] = d
	}
	return drafts, nil
}

// ListResult is the outcome of list-matching verification.
type ListResult struct {
	BlockResult
	// Draft is the lowest index of a draft whose first Accepted tokens were
	// accepted: the committed block is drafts[Draft][:Accepted] then Token.
	Draft int `json:"draft"`
}

// Committed appends the committed tokens of the block to dst.
func (r ListResult) Committed(dst []int, drafts [][]int) []int {
	return r.BlockResult.Committed(dst, drafts[r.Draft])
}

// VerifyCoupledList verifies K drafts of equal length L by list matching
// (see above). y gives the target distribution after the committed context
// and an accepted prefix; it is called once per position on the committed
// path (at most L+1 times).
func VerifyCoupledList(y DistAt, drafts [][]int, seed uint64, start int) (ListResult, error) {
	if len(drafts) == 0 {
		return ListResult{}, errors.New("speculative: VerifyCoupledList: no drafts")
	}
	L := len(drafts[0])
	for k, d := range drafts {
		if len(d) != L {
			return ListResult{}, fmt.Errorf("speculative: VerifyCoupledList: draft %d has %d tokens, draft 0 has %d", k, len(d), L)
		}
	}
	alive := make([]int, len(drafts))
	for k := range alive {
		alive[k] = k
	}
	var prefix []int
	for l := 0; ; l++ {
		p, err := y(prefix)
		if err != nil {
			return ListResult{}, err
		}
		s, best := -1, math.Inf(1)
		for _, k := range alive {
			if tok, sc := raceWinner(p, seed, k, start+l); sc < best || (sc == best && tok < s) {
				s, best = tok, sc
			}
		}
		if s < 0 {
			return ListResult{}, fmt.Errorf("position %d: %w", l, ErrNoMass)
		}
		if l == L {
			return ListResult{BlockResult{Accepted: L, Token: s}, alive[0]}, nil
		}
		next := alive[:0:0]
		for _, k := range alive {
			if drafts[k][l] == s {
				next = append(next, k)
			}
		}
		if len(next) == 0 {
			return ListResult{BlockResult{Accepted: l, Token: s, Resampled: true}, alive[0]}, nil
		}
		alive = next
		prefix = append(prefix, s)
	}
}
