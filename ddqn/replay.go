package ddqn

// replay is a ring buffer of transitions (s, a, r, s', done) with raw,
// unnormalised states stored flat. It grows as transitions arrive, up to
// its capacity, then overwrites the oldest.
type replay struct {
	capacity, inputs int
	next             int // slot the next transition goes to once full
	s, s2            []float64
	a                []int
	r                []float64
	done             []bool
}

func (b *replay) len() int { return len(b.a) }

func (b *replay) add(s []float64, a int, r float64, s2 []float64, done bool) {
	if len(b.a) < b.capacity {
		b.s = append(b.s, s...)
		b.s2 = append(b.s2, s2...)
		b.a = append(b.a, a)
		b.r = append(b.r, r)
		b.done = append(b.done, done)
		return
	}
	k := b.next
	copy(b.s[k*b.inputs:(k+1)*b.inputs], s)
	copy(b.s2[k*b.inputs:(k+1)*b.inputs], s2)
	b.a[k], b.r[k], b.done[k] = a, r, done
	b.next = (k + 1) % b.capacity
}

func (b *replay) state(k int) []float64 { return b.s[k*b.inputs : (k+1)*b.inputs] }
func (b *replay) nextState(k int) []float64 {
	return b.s2[k*b.inputs : (k+1)*b.inputs]
}
