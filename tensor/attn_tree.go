package tensor

// WeightedSumAdd continues a WeightedSum: out[i] += Σ_t a[t]·v[t*stride+i]
// for every i < len(out), each product and each partial sum rounded to
// float32, in increasing t, starting from out's values. WeightedSum over
// rows 0…k−1 followed by WeightedSumAdd over rows k…n−1 (wherever these
// lie) gives WeightedSum's bits over all n rows: tree attention sums the
// values of a cached prefix and then those of a node's ancestors, which
// are not contiguous, and gets the sum of the node's path alone.
//
// A KV cache held in pages (model/llama) sums its values page by page
// this way, and gets the bits of one sum over contiguous rows.
func WeightedSumAdd(out, a, v []float32, stride int) {
	cols := len(out)
	if len(a) == 0 {
		return
	}
	if (len(a)-1)*stride+cols > len(v) {
		panic("tensor: WeightedSumAdd reads past the rows")
	}
	c := 0
	if ks := kernels(); ks != nil {
		w := ks.wsumWidth
		for c+w <= cols {
			k := min(4, (cols-c)/w)
			ks.wsum[k](&out[c], &a[0], &v[c], uintptr(4*stride), len(a))
			c += k * w
		}
	}
	if c == cols {
		return
	}
	for t, at := range a {
		row := v[t*stride+c : t*stride+cols]
		for i, x := range row {
			out[c+i] += float32(at * x) // rounded before the add: never fused
		}
	}
}
