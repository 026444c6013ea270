package uregex

import (
	"math/bits"
	"sync"
	"unicode/utf8"
)

// A machine holds the state of matching one text: the backtracking stack
// and the registers of the empty-iteration checks. Machines are pooled
// per Regexp, so matching allocates nothing once the stack has grown.
type machine struct {
	re    *Regexp
	s     string
	stack []frame
	regs  []int
	steps int
	limit int
	err   error
	// The fast matcher's results: the end of the match, of an atomic group.
	end, atomicEnd int
	// The fast matcher's failure memos, valid while their gen is gen,
	// which each FindAll call advances.
	memos []repMemo
	gen   uint64
}

// A frame is a choice point to return to on failure.
type frame struct {
	kind frameKind
	pc   int32  // instruction (or, for frAlt, alternation index; for frReg, register)
	pos  int    // text position
	aux  uint64 // frRep: the position the repeat may not step back past; frLazy: count; frAlt: branches left
}

type frameKind uint8

const (
	frSplit frameKind = iota // resume at pc, pos
	frAlt                    // try the next branch in aux of alternation pc at pos
	frRep                    // greedy class repeat of instruction pc: give back one code point
	frLazy                   // lazy class repeat of instruction pc: take one more code point
	frReg                    // restore register pc to pos
)

// FindAll appends to dst the successive non-overlapping matches of re in
// s, as [start, end) byte offsets, and returns the extended slice. The
// matches are those of Rust's onig crate's find_iter (which Hugging Face's
// tokenizers split with): each search starts where the previous match
// ended and finds the leftmost match, the first in the pattern's order of
// preference; after an empty match the next search starts one character
// further; and an empty match found by the search right after a non-empty
// match is dropped. An invalid UTF-8 byte in s is one character, U+FFFD.
//
// The only error is one wrapping ErrStepLimit, with the matches found
// before it.
func (re *Regexp) FindAll(s string, dst [][2]int) ([][2]int, error) {
	m := re.machine()
	m.s = s
	m.gen++
	defer func() {
		m.s = ""
		re.machines.Put(m)
	}()
	if re.fast != nil && re.first == nil {
		return re.findAllFast(m, s, dst)
	}
	last := 0
	skipEmpty := false
	for last <= len(s) {
		start, end, ok := m.search(last)
		if m.err != nil {
			return dst, m.err
		}
		if !ok {
			break
		}
		if start == end {
			last = end + charLen(s, end)
			if skipEmpty {
				skipEmpty = false
				continue
			}
		} else {
			last = end
			skipEmpty = true
		}
		dst = append(dst, [2]int{start, end})
	}
	return dst, nil
}

// findAllFast is FindAll for a fast matcher that any code point may
// start, in one loop.
func (re *Regexp) findAllFast(m *machine, s string, dst [][2]int) ([][2]int, error) {
	fast := re.fast
	last, skipEmpty := 0, false
	for last <= len(s) {
		start := last
		for {
			m.steps = 0
			if fast(m, start) {
				break
			}
			if m.err != nil {
				return dst, m.err
			}
			if start += charLen(s, start); start > len(s) {
				return dst, nil
			}
		}
		end := m.end
		if start == end {
			last = end + charLen(s, end)
			if skipEmpty {
				skipEmpty = false
				continue
			}
		} else {
			last = end
			skipEmpty = true
		}
		dst = append(dst, [2]int{start, end})
	}
	return dst, nil
}

func (re *Regexp) machine() *machine {
	if m, ok := re.machines.Get().(*machine); ok {
		m.err = nil
		return m
	}
	return &machine{re: re, regs: make([]int, re.nregs), limit: re.limit, memos: make([]repMemo, re.nmemos)}
}

// charLen is the length of the character at s[i:], 1 past the end.
func charLen(s string, i int) int {
	if i >= len(s) || s[i] < utf8.RuneSelf {
		return 1
	}
	_, w := utf8.DecodeRuneInString(s[i:])
	return w
}

// search finds the leftmost match starting at or after from.
func (m *machine) search(from int) (start, end int, ok bool) {
	s := m.s
	first := m.re.first
	for start = from; start <= len(s); {
		if first != nil {
			// Skip what cannot start a match.
			for start < len(s) && s[start] < utf8.RuneSelf && !first.hasByte(s[start]) {
				start++
			}
			if start == len(s) {
				return 0, 0, false
			}
			if s[start] >= utf8.RuneSelf {
				r, w := utf8.DecodeRuneInString(s[start:])
				if !first.hasHigh(r) {
					start += w
					continue
				}
			}
		}
		m.steps = 0
		if fast := m.re.fast; fast != nil {
			if fast(m, start) {
				return start, m.end, true
			}
		} else {
			m.stack = m.stack[:0]
			if end, ok := m.run(0, start); ok {
				return start, end, true
			}
		}
		if m.err != nil {
			return 0, 0, false
		}
		start += charLen(s, start)
	}
	return 0, 0, false
}

// run executes the program from pc at pos until it matches (returning the
// end) or every choice made since the call has failed. Choice points left
// by a match are discarded, which makes lookaheads and atomic groups
// atomic.
func (m *machine) run(pc int, pos int) (int, bool) {
	base := len(m.stack)
	s := m.s
	prog := m.re.prog
	for {
		in := &prog[pc]
		switch in.op {
		case opMatch:
			m.stack = m.stack[:base]
			return pos, true

		case opClass:
			if pos >= len(s) {
				goto fail
			}
			w := in.cls.at(s, pos)
			if w == 0 {
				goto fail
			}
			pos += w
			pc++
			continue

		case opRep:
			c := in.cls
			p := pos
			for n := int32(0); n < in.min; n++ {
				if p >= len(s) {
					goto fail
				}
				w := c.at(s, p)
				if w == 0 {
					goto fail
				}
				p += w
			}
			if in.mode == lazy {
				if in.max < 0 || in.max > in.min {
					m.stack = append(m.stack, frame{kind: frLazy, pc: int32(pc), pos: p, aux: uint64(in.min)})
				}
				pos = p
				pc++
				continue
			}
			minEnd := p
			if in.max < 0 {
			more:
				for p < len(s) {
					switch c.tab[s[p]] {
					case 1:
						p++
						continue
					case 2:
						if w := c.highAt(s, p); w > 0 {
							p += w
							continue
						}
					}
					break more
				}
			} else {
				for n := in.min; n < in.max && p < len(s); n++ {
					w := c.at(s, p)
					if w == 0 {
						break
					}
					p += w
				}
			}
			if p > minEnd && in.mode == greedy {
				m.stack = append(m.stack, frame{kind: frRep, pc: int32(pc), pos: p, aux: uint64(minEnd)})
			}
			pos = p
			pc++
			continue

		case opAlt:
			t := &m.re.alts[in.x]
			var mask uint64
			if pos < len(s) {
				if b := s[pos]; b < utf8.RuneSelf {
					mask = t.ascii[b]
				} else {
					r, _ := utf8.DecodeRuneInString(s[pos:])
					mask = t.high(r)
				}
			} else {
				mask = t.nullable
			}
			if mask == 0 {
				goto fail
			}
			i := bits.TrailingZeros64(mask)
			if mask &= mask - 1; mask != 0 {
				m.stack = append(m.stack, frame{kind: frAlt, pc: in.x, pos: pos, aux: mask})
			}
			pc = int(t.branch[i])
			continue

		case opSplit:
			if in.cls != nil && !classStarts(in.cls, s, pos) {
				pc = int(in.y)
				continue
			}
			m.stack = append(m.stack, frame{kind: frSplit, pc: in.y, pos: pos})
			pc = int(in.x)
			continue

		case opSplitLazy:
			if in.cls == nil || classStarts(in.cls, s, pos) {
				m.stack = append(m.stack, frame{kind: frSplit, pc: in.x, pos: pos})
			}
			pc = int(in.y)
			continue

		case opJmp:
			pc = int(in.x)
			continue

		case opAssert:
			if !assert(in.anchor, s, pos) {
				goto fail
			}
			pc++
			continue

		case opLookClass:
			ok := classStarts(in.cls, s, pos)
			if ok == in.neg {
				goto fail
			}
			pc++
			continue

		case opLook:
			_, ok := m.run(int(in.x), pos)
			if m.err != nil {
				m.stack = m.stack[:base]
				return 0, false
			}
			if ok == in.neg {
				goto fail
			}
			pc++
			continue

		case opAtomic:
			end, ok := m.run(int(in.x), pos)
			if m.err != nil {
				m.stack = m.stack[:base]
				return 0, false
			}
			if !ok {
				goto fail
			}
			pos = end
			pc++
			continue

		case opNullStart:
			m.stack = append(m.stack, frame{kind: frReg, pc: in.x, pos: m.regs[in.x]})
			m.regs[in.x] = pos
			pc++
			continue

		case opNullEnd:
			if pos == m.regs[in.x] {
				pc = int(in.y)
			} else {
				pc++
			}
			continue
		}

	fail:
		for {
			top := len(m.stack) - 1
			if top < base {
				return 0, false
			}
			if m.steps++; m.steps > m.limit {
				m.err = ErrStepLimit
				m.stack = m.stack[:base]
				return 0, false
			}
			f := &m.stack[top]
			switch f.kind {
			case frSplit:
				pc, pos = int(f.pc), f.pos
				m.stack = m.stack[:top]
			case frAlt:
				i := bits.TrailingZeros64(f.aux)
				pc, pos = int(m.re.alts[f.pc].branch[i]), f.pos
				if f.aux &= f.aux - 1; f.aux == 0 {
					m.stack = m.stack[:top]
				}
			case frRep:
				p, minEnd := f.pos, int(f.aux)
				if s[p-1] < utf8.RuneSelf {
					p--
				} else {
					_, w := utf8.DecodeLastRuneInString(s[minEnd:p])
					p -= w
				}
				if p == minEnd {
					m.stack = m.stack[:top]
				} else {
					f.pos = p
				}
				pc, pos = int(f.pc)+1, p
			case frLazy:
				in := &prog[f.pc]
				if hi := int(in.max); hi >= 0 && int(f.aux) >= hi {
					m.stack = m.stack[:top]
					continue
				}
				if f.pos >= len(s) {
					m.stack = m.stack[:top]
					continue
				}
				w := in.cls.at(s, f.pos)
				if w == 0 {
					m.stack = m.stack[:top]
					continue
				}
				f.pos += w
				f.aux++
				pc, pos = int(f.pc)+1, f.pos
				if hi := int(in.max); hi >= 0 && int(f.aux) >= hi {
					m.stack = m.stack[:top]
				}
			case frReg:
				m.regs[f.pc] = f.pos
				m.stack = m.stack[:top]
				continue
			}
			break
		}
	}
}

// lastLen is the length of the last code point of s[from:to], from < to.
func lastLen(s string, from, to int) int {
	if s[to-1] < utf8.RuneSelf {
		return 1
	}
	_, w := utf8.DecodeLastRuneInString(s[from:to])
	return w
}

// high is the mask of branches that can start with the non-ASCII r.
func (t *altTable) high(r rune) uint64 {
	mask := t.kinds[kindOf(r)]
	for _, e := range t.exc {
		if e.exc.has(r) {
			mask ^= e.bit
		}
	}
	return mask
}

// classStarts reports whether there is a code point at s[pos:] and it is
// in c.
func classStarts(c *class, s string, pos int) bool {
	if pos >= len(s) {
		return false
	}
	t := c.tab[s[pos]]
	return t == 1 || t == 2 && c.highAt(s, pos) > 0
}

// assert tests a zero-width anchor at pos. Like Oniguruma's, ^ and $ know
// only '\n' as a line end, and ^ does not match at the end of a text that
// ends with '\n'.
func assert(a anchor, s string, pos int) bool {
	switch a {
	case aBeginLine:
		return pos == 0 || (s[pos-1] == '\n' && pos < len(s))
	case aEndLine:
		return pos == len(s) || s[pos] == '\n'
	case aBeginText:
		return pos == 0
	case aEndText:
		return pos == len(s)
	case aEndTextNL:
		return pos == len(s) || (pos == len(s)-1 && s[pos] == '\n')
	case aWordB, aNotWordB:
		before := pos > 0 && isWordBefore(s, pos)
		after := pos < len(s) && isWordAt(s, pos)
		return (before != after) == (a == aWordB)
	}
	return false
}

var wordClass = sync.OnceValue(func() *class { return newClass(wordSet) })

func isWordAt(s string, pos int) bool {
	r, _ := utf8.DecodeRuneInString(s[pos:])
	return wordClass().has(r)
}

func isWordBefore(s string, pos int) bool {
	r, _ := utf8.DecodeLastRuneInString(s[:pos])
	return wordClass().has(r)
}
