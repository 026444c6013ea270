package distill

import (
	"fmt"
	"math/rand/v2"
	"unicode/utf8"

	"github.com/hlmproject/hlm/dataset"
	"github.com/hlmproject/hlm/model/llama"
	"github.com/hlmproject/hlm/sampling"
	"github.com/hlmproject/hlm/tokenizer"
)

// A batch is b sequences of t tokens, each starting at position 0 with BOS,
// and the teacher's next-token distribution after every token (the soft
// labels).
type batch struct {
	b, t   int
	tokens []int     // b·t, row-major
	probs  []float32 // b·t·V
	// kinds counts the sequences of each origin (sampled, text, on-policy).
	kinds [3]int
}

// Origins of a sequence.
const (
	fromTeacher = iota // sampled from the teacher at temperature 1
	fromText           // a window of --data text
	fromStudent        // sampled from the student, scored by the teacher (on-policy)
	fromHeldout        // held-out teacher samples (never trained on)
	numOrigins
)

// rngFor is the random stream of sequence i of step step from one origin:
// every sequence has its own stream, so a batch does not depend on the
// thread count or on the other sequences.
func rngFor(seed uint64, step, i, origin int) *rand.Rand {
	return rand.New(rand.NewPCG(seed, uint64(step)<<24^uint64(i)<<4^uint64(origin)))
}

// corpus is --data text: stories tokenized with the teacher's tokenizer,
// each starting with BOS (and ending with EOS when the tokenizer has one
// distinct from BOS), concatenated.
type corpus struct {
	stream []int
	starts []int // offset of each story's BOS
}

// loadCorpus tokenizes text files. Text that is not UTF-8 or holds no story
// is an error.
func loadCorpus(files []string, read func(string) ([]byte, error), tok *tokenizer.Tokenizer) (*corpus, error) {
	c := &corpus{}
	for _, f := range files {
		b, err := read(f)
		if err != nil {
			return nil, fmt.Errorf("--data: %w", err)
		}
		if !utf8.Valid(b) {
			return nil, fmt.Errorf("--data %s: not UTF-8 text", f)
		}
		stories, err := dataset.SplitStories(string(b), f)
		if err != nil {
			return nil, fmt.Errorf("--data %s: no text (%w)", f, err)
		}
		for _, s := range stories {
			ids := tok.Encode(s.Text, true)
			if tok.EOS() >= 0 && tok.EOS() != tok.BOS() {
				ids = append(ids, tok.EOS()) // the end of the story
			}
			if len(ids) < 2 {
				continue
			}
			c.starts = append(c.starts, len(c.stream))
			c.stream = append(c.stream, ids...)
		}
	}
	if len(c.starts) == 0 {
		return nil, fmt.Errorf("--data: no tokens in %v", files)
	}
	return c, nil
}

// window is t tokens from the start of a random story (running into the
// following ones, wrapping around the corpus).
func (c *corpus) window(dst []int, rng *rand.Rand) {
	at := c.starts[rng.IntN(len(c.starts))]
	for i := range dst {
		dst[i] = c.stream[(at+i)%len(c.stream)]
	}
}

// sample draws n sequences of t tokens from m, each from BOS with its own
// stream, evaluating all n in one batched pass per position. Sequence i is
// sampled at temperature temps[i mod len(temps)] (1 when temps is empty).
// It writes the tokens into toks (n·t) and, when probs is not nil, m's
// distribution at temperature 1 after every token (n·t·V) — the soft labels,
// whatever temperature drew the tokens.
func sample(m *llama.Model, bos int, toks []int, probs []float32, n, t int, rngs []*rand.Rand, temps []float64) error {
	v := m.Config().Vocab
	ss := make([]*llama.Session, n)
	step := make([][]int, n)
	for i := range ss {
		ss[i] = m.Session()
		toks[i*t] = bos
		step[i] = []int{bos}
	}
	dist := make([]float64, v)
	var hot []float64
	for pos := 0; pos < t; pos++ {
		for i := range step {
			step[i][0] = toks[i*t+pos]
		}
		out, err := llama.EvalBatch(ss, step, true)
		if err != nil {
			return err
		}
		for i := range out {
			dist = sampling.Softmax(dist, out[i][0], 1)
			if probs != nil {
				row := probs[(i*t+pos)*v : (i*t+pos+1)*v]
				for j, p := range dist {
					row[j] = float32(p)
				}
			}
			if pos+1 < t {
				from := dist
				if len(temps) > 0 && temps[i%len(temps)] != 1 {
					hot = sampling.Softmax(hot, out[i][0], temps[i%len(temps)])
					from = hot
				}
				next := sampling.Sample(from, rngs[i])
				if next < 0 {
					return fmt.Errorf("%s: no token to sample (non-finite logits)", m.Name())
				}
				toks[i*t+pos+1] = next
			}
		}
	}
	return nil
}

// score writes m's distributions after every token of n sequences of t
// tokens (one batched block evaluation).
func score(m *llama.Model, toks []int, probs []float32, n, t int) error {
	v := m.Config().Vocab
	ss := make([]*llama.Session, n)
	blocks := make([][]int, n)
	for i := range ss {
		ss[i] = m.Session()
		blocks[i] = toks[i*t : (i+1)*t]
	}
	out, err := llama.EvalBatch(ss, blocks, false)
	if err != nil {
		return err
	}
	dist := make([]float64, v)
	for i := range out {
		for pos, logits := range out[i] {
			dist = sampling.Softmax(dist, logits, 1)
			row := probs[(i*t+pos)*v : (i*t+pos+1)*v]
			for j, p := range dist {
				row[j] = float32(p)
			}
		}
	}
	return nil
}

// mix says how many of a batch's b sequences come from each origin.
func mix(b int, textFrac, onPolicy float64) (teacher, text, student int) {
	text = int(float64(b)*textFrac + 0.5)
	student = min(b-text, int(float64(b)*onPolicy+0.5))
	return b - text - student, text, student
}

// makeBatch builds step's batch: sequences from the teacher, the corpus and
// the student (in that order), with the teacher's distributions.
func (r *run) makeBatch(step int) (*batch, error) {
	c := r.cfg
	b, t, v := c.Batch, c.Seq, r.vocab
	bt := &batch{b: b, t: t, tokens: make([]int, b*t), probs: make([]float32, b*t*v)}
	nt, nx, ns := mix(b, c.TextFrac, c.OnPolicy)
	bt.kinds = [3]int{nt, nx, ns}
	if nt > 0 {
		rngs := make([]*rand.Rand, nt)
		for i := range rngs {
			rngs[i] = rngFor(c.Seed, step, i, fromTeacher)
		}
		if err := sample(r.teacher, r.bos, bt.tokens[:nt*t], bt.probs[:nt*t*v], nt, t, rngs, c.SampleTemps); err != nil {
			return nil, err
		}
	}
	rest := bt.tokens[nt*t:]
	for i := 0; i < nx; i++ {
		r.text.window(rest[i*t:(i+1)*t], rngFor(c.Seed, step, i, fromText))
	}
	if ns > 0 {
		stu, err := r.studentModel()
		if err != nil {
			return nil, err
		}
		rngs := make([]*rand.Rand, ns)
		for i := range rngs {
			rngs[i] = rngFor(c.Seed, step, i, fromStudent)
		}
		if err := sample(stu, r.bos, rest[nx*t:], nil, ns, t, rngs, nil); err != nil {
			return nil, err
		}
	}
	if nx+ns > 0 {
		if err := score(r.teacher, rest, bt.probs[nt*t*v:], nx+ns, t); err != nil {
			return nil, err
		}
	}
	return bt, nil
}

// heldoutBatch is the fixed held-out set: n teacher samples from streams no
// training step uses.
func (r *run) heldoutBatch(n int) (*batch, error) {
	t, v := r.cfg.Seq, r.vocab
	bt := &batch{b: n, t: t, tokens: make([]int, n*t), probs: make([]float32, n*t*v)}
	rngs := make([]*rand.Rand, n)
	for i := range rngs {
		rngs[i] = rngFor(r.cfg.Seed, 0, i, fromHeldout)
	}
	return bt, sample(r.teacher, r.bos, bt.tokens, bt.probs, n, t, rngs, nil)
}
