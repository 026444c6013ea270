package hybrid

import (
	"fmt"
	"math"
	"slices"

	"github.com/hlmproject/hlm/speculative"
)

// listBlock drafts list_k coupled sequences of L tokens for list matching
// (Rowan, Phan, Khisti 2025), each along its own prefix, flattened draft by
// draft, sent as ids only.
type listBlock struct{}

func (listBlock) step(d *Device, room int) (Step, error) {
	L, err := d.blockLength(room, false)
	if err != nil {
		return Step{}, err
	}
	drafts, err := d.draftList(L)
	if err != nil {
		return Step{}, err
	}
	st := d.sendBlock(drafts)
	d.lastL = L
	return st, nil
}

// draftList drafts the lists. speculative.ListDrafts asks for one distribution
// per drafted token in the order it flattens them, so the i-th
// distribution asked for is the one draft token i was drawn from; drafts
// sharing a prefix share its SLM evaluation through memo.
func (d *Device) draftList(L int) ([]drafted, error) {
	base := d.seq
	memo := map[string][]float64{}
	var samples [][]float64
	x := func(prefix []int) ([]float64, error) {
		key := fmt.Sprint(prefix)
		p, ok := memo[key]
		if !ok {
			logits, err := d.slm.last(append(slices.Clone(base), prefix...))
			if err != nil {
				return nil, err
			}
			p = d.p.distOf(nil, logits)
			memo[key] = p
		}
		samples = append(samples, p)
		return p, nil
	}
	lists, err := speculative.ListDrafts(x, d.p.ListK, L, d.p.Seed, len(base))
	if err != nil {
		return nil, fmt.Errorf("hybrid: %w", err)
	}
	drafts := make([]drafted, 0, len(samples))
	for _, toks := range lists {
		for _, t := range toks {
			drafts = append(drafts, drafted{token: t, sample: samples[len(drafts)], u: math.NaN()})
		}
	}
	return drafts, nil
}

// listK is the number of drafts per position of the method (1 unless it
// sends lists).
func (p Params) listK() int {
	if p.method().ListK {
		return p.ListK
	}
	return 1
}
