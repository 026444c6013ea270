package metrics

import (
	"fmt"
	"slices"
	"strings"
)

// Score is a precision / recall / F1 triple, each in [0, 1].
type Score struct {
	Precision float64 `json:"precision"`
	Recall    float64 `json:"recall"`
	F1        float64 `json:"f1"`
}

// score builds a Score from a match count and the candidate and reference
// sizes, with rouge-score's conventions: precision = matches/max(cand, 1),
// recall = matches/max(ref, 1), and F1 = 0 when both are 0.
func score(matches, cand, ref int) Score {
	p := float64(matches) / float64(max(cand, 1))
	r := float64(matches) / float64(max(ref, 1))
	f := 0.0
	if p+r > 0 {
		f = 2 * p * r / (p + r)
	}
	return Score{Precision: p, Recall: r, F1: f}
}

// RougeScores are ROUGE-1, ROUGE-2 and ROUGE-L of one candidate against one
// reference.
type RougeScores struct {
	Rouge1 Score `json:"rouge1"`
	Rouge2 Score `json:"rouge2"`
	RougeL Score `json:"rougeL"`
}

// Rouge computes ROUGE-1, ROUGE-2 and ROUGE-L of candidate against reference,
// tokenizing each text once.
func Rouge(candidate, reference string) RougeScores {
	c, r := tokenize(candidate), tokenize(reference)
	return RougeScores{
		Rouge1: rougeN(c, r, 1),
		Rouge2: rougeN(c, r, 2),
		RougeL: rougeL(c, r),
	}
}

// RougeN is ROUGE-N: the clipped n-gram overlap count divided by the number
// of candidate n-grams (precision) and of reference n-grams (recall). A text
// with fewer than n tokens has no n-grams, and then every field is 0.
// n must be at least 1.
func RougeN(candidate, reference string, n int) Score {
	if n < 1 {
		panic(fmt.Sprintf("metrics: RougeN with n = %d < 1", n))
	}
	return rougeN(tokenize(candidate), tokenize(reference), n)
}

func rougeN(c, r tokens, n int) Score {
	nc, nr := max(c.len()-n+1, 0), max(r.len()-n+1, 0)
	if nc == 0 || nr == 0 {
		return score(0, nc, nr)
	}
	ref := make(map[string]int, nr)
	for i := range nr {
		ref[r.ngram(i, n)]++
	}
	matches := 0
	for i := range nc {
		g := c.ngram(i, n)
		if ref[g] > 0 { // clipped: each reference n-gram matches once
			ref[g]--
			matches++
		}
	}
	return score(matches, nc, nr)
}

// RougeL is ROUGE-L: the length of the longest common subsequence of the
// token sequences divided by the candidate length (precision) and the
// reference length (recall); all 0 when either text has no tokens.
func RougeL(candidate, reference string) Score {
	return rougeL(tokenize(candidate), tokenize(reference))
}

func rougeL(c, r tokens) Score {
	if c.len() == 0 || r.len() == 0 {
		return Score{}
	}
	ids := map[string]int32{}
	ci, ri := intern(ids, c), intern(ids, r)
	return score(lcsLen(ri, ci), len(ci), len(ri))
}

// RougeLsum is summary-level ROUGE-L (rouge-score's "rougeLsum"; Lin 2004,
// section 3.2): texts are split into sentences at newlines, and each
// reference sentence scores the union of its LCS with every candidate
// sentence, each token counted at most as often as it occurs in both texts.
func RougeLsum(candidate, reference string) Score {
	ids := map[string]int32{}
	sents := func(text string) (out [][]int32, n int) {
		for _, line := range strings.Split(text, "\n") {
			if line != "" {
				s := intern(ids, tokenize(line))
				out = append(out, s)
				n += len(s)
			}
		}
		return out, n
	}
	cs, nc := sents(candidate)
	rs, nr := sents(reference)
	if nc == 0 || nr == 0 {
		return Score{}
	}
	cntC, cntR := map[int32]int{}, map[int32]int{}
	for _, s := range cs {
		for _, t := range s {
			cntC[t]++
		}
	}
	for _, s := range rs {
		for _, t := range s {
			cntR[t]++
		}
	}
	hits := 0
	for _, r := range rs {
		var union []int
		for _, c := range cs {
			union = append(union, lcsIndices(r, c)...)
		}
		slices.Sort(union)
		for _, i := range slices.Compact(union) {
			if t := r[i]; cntC[t] > 0 && cntR[t] > 0 {
				hits++
				cntC[t]--
				cntR[t]--
			}
		}
	}
	return score(hits, nc, nr)
}

// intern maps the tokens of t to small integers, shared through ids.
func intern(ids map[string]int32, t tokens) []int32 {
	out := make([]int32, t.len())
	for i := range out {
		s := t.tok(i)
		id, ok := ids[s]
		if !ok {
			id = int32(len(ids))
			ids[s] = id
		}
		out[i] = id
	}
	return out
}

// lcsLen is the length of a longest common subsequence of a and b, in
// O(len(a)·len(b)) time and O(len(b)) memory.
func lcsLen(a, b []int32) int {
	prev, cur := make([]int, len(b)+1), make([]int, len(b)+1)
	for i := range a {
		for j := range b {
			if a[i] == b[j] {
				cur[j+1] = prev[j] + 1
			} else {
				cur[j+1] = max(prev[j+1], cur[j])
			}
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// lcsIndices returns the indices into ref of one longest common subsequence
// of ref and can, read back from the full table with rouge-score's
// tie-breaking (_backtrack_norec), in increasing order.
func lcsIndices(ref, can []int32) []int {
	w := len(can) + 1
	t := make([]int, (len(ref)+1)*w)
	for i := 1; i <= len(ref); i++ {
		for j := 1; j <= len(can); j++ {
			if ref[i-1] == can[j-1] {
				t[i*w+j] = t[(i-1)*w+j-1] + 1
			} else {
				t[i*w+j] = max(t[(i-1)*w+j], t[i*w+j-1])
			}
		}
	}
	var out []int
	for i, j := len(ref), len(can); i > 0 && j > 0; {
		switch {
		case ref[i-1] == can[j-1]:
			out = append(out, i-1)
			i, j = i-1, j-1
		case t[i*w+j-1] > t[(i-1)*w+j]:
			j--
		default:
			i--
		}
	}
	slices.Reverse(out)
	return out
}
