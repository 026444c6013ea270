package llama

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/hlmproject/hlm/model"
)

// Bad input to EvalTree and KeepPath: errors that change nothing.

// TestEvalTreeBadInput: malformed trees, and KeepPath of what is not a
// chain of the last tree, are errors that name the problem (wrapping
// model.ErrTree, ErrToken or ErrContextFull) and change nothing: Len()
// stays, a tree evaluated before is still there to keep, and the session
// goes on to give the logits of one that never saw the bad call.
func TestEvalTreeBadInput(t *testing.T) {
	m := familyModel("gpt_neo")(t)
	c := m.cfg
	prompt := []int{311, 68, 111, 44, 259}
	roots := func(n int) (tok, par []int) {
		for i := range n {
			tok, par = append(tok, i%c.Vocab), append(par, -1)
		}
		return
	}
	chain := func(n int) (tok, par []int) {
		for i := range n {
			tok, par = append(tok, i%c.Vocab), append(par, i-1)
		}
		return
	}
	deepT, deepP := chain(c.SeqLen - len(prompt) + 1)
	wideT, wideP := roots(c.SeqLen + 1)
	for _, tc := range []struct {
		name            string
		tokens, parents []int
		dropout         bool
		want            error // nil: an error without a sentinel
		msg             string
	}{
		{"no nodes", nil, nil, false, model.ErrTree, "no nodes"},
		{"fewer parents than tokens", []int{1, 2}, []int{-1}, false, model.ErrTree, "2 tokens but 1 parents"},
		{"more parents than tokens", []int{1}, []int{-1, 0}, false, model.ErrTree, "1 tokens but 2 parents"},
		{"parent below -1", []int{1, 2}, []int{-1, -2}, false, model.ErrTree, "node 1 has parent -2"},
		{"own parent", []int{1, 2}, []int{-1, 1}, false, model.ErrTree, "node 1 has parent 1"},
		{"a later parent", []int{1, 2, 3}, []int{-1, 2, -1}, false, model.ErrTree, "node 1 has parent 2"},
		{"a cycle", []int{1, 2}, []int{1, 0}, false, model.ErrTree, "node 0 has parent 1"},
		{"parent past the nodes", []int{1}, []int{5}, false, model.ErrTree, "node 0 has parent 5"},
		{"negative token", []int{1, -1}, []int{-1, 0}, false, model.ErrToken, "node 1 holds -1"},
		{"token = vocabulary", []int{1, c.Vocab}, []int{-1, -1}, false, model.ErrToken, fmt.Sprintf("node 1 holds %d", c.Vocab)},
		{"deeper than the context", deepT, deepP, false, model.ErrContextFull, fmt.Sprintf("5 cached positions + a tree %d deep > %d", len(deepT), c.SeqLen)},
		{"more nodes than the context", wideT, wideP, false, model.ErrContextFull, fmt.Sprintf("%d nodes", len(wideT))},
		{"MC dropout on", []int{1, 2}, []int{-1, 0}, true, nil, "dropout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := m.Session()
			if _, err := s.Eval(prompt); err != nil {
				t.Fatal(err)
			}
			if _, err := s.EvalTree([]int{20, 21, 22}, []int{-1, 0, -1}); err != nil {
				t.Fatal(err)
			}
			if tc.dropout {
				s.SetDropout(0.5, rand.New(rand.NewPCG(1, 2)))
			}
			got, err := s.EvalTree(tc.tokens, tc.parents)
			s.SetDropout(0, nil)
			if err == nil || got != nil {
				t.Fatalf("EvalTree(%v, %v) = %d rows, %v; want an error", tc.tokens, tc.parents, len(got), err)
			}
			if tc.want != nil && !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("error %q, want %v saying %q", err, tc.want, tc.msg)
			}
			expectIntact(t, s, prompt, []int{20, 21})
		})
	}

	tokens, parents := []int{30, 31, 32, 33}, []int{-1, 0, 1, -1} // 0 → 1 → 2, and 3
	for _, tc := range []struct {
		name   string
		before func(s *Session) ([]int, error) // after EvalTree: the tokens it appends
		path   []int
		tree   bool // the tree is still there after the error
		msg    string
	}{
		{"after Truncate", func(s *Session) ([]int, error) { return nil, s.Truncate(s.Len()) }, []int{0}, false, "no tree"},
		{"after Eval", func(s *Session) ([]int, error) { _, err := s.Eval([]int{9}); return []int{9}, err }, []int{0}, false, "no tree"},
		{"after Prefill", func(s *Session) ([]int, error) { _, err := s.Prefill([]int{9}); return []int{9}, err }, []int{0}, false, "no tree"},
		{"after KeepPath", func(s *Session) ([]int, error) { return []int{30}, s.KeepPath([]int{0}) }, []int{1}, false, "no tree"},
		{"after an empty KeepPath", func(s *Session) ([]int, error) { return nil, s.KeepPath(nil) }, []int{0}, false, "no tree"},
		{"first node not a root", nil, []int{1}, true, "path[0] is node 1, whose parent is 0, not -1"},
		{"negative node", nil, []int{-1}, true, "path[0] is node -1; the tree has 4 nodes"},
		{"node past the tree", nil, []int{0, 4}, true, "path[1] is node 4"},
		{"skips a node", nil, []int{0, 2}, true, "path[1] is node 2, whose parent is 1, not 0"},
		{"repeats a node", nil, []int{0, 0}, true, "path[1] is node 0, whose parent is -1, not 0"},
		{"two roots", nil, []int{0, 3}, true, "path[1] is node 3, whose parent is -1, not 0"},
		{"a valid path then more", nil, []int{0, 1, 2, 2}, true, "path[3] is node 2"},
	} {
		t.Run("KeepPath/"+tc.name, func(t *testing.T) {
			s := m.Session()
			if _, err := s.Eval(prompt); err != nil {
				t.Fatal(err)
			}
			if _, err := s.EvalTree(tokens, parents); err != nil {
				t.Fatal(err)
			}
			seen := append([]int(nil), prompt...)
			if tc.before != nil {
				more, err := tc.before(s)
				if err != nil {
					t.Fatal(err)
				}
				seen = append(seen, more...)
			}
			n := s.Len()
			err := s.KeepPath(tc.path)
			if !errors.Is(err, model.ErrTree) || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("KeepPath(%v): %v, want %v saying %q", tc.path, err, model.ErrTree, tc.msg)
			}
			if s.Len() != n {
				t.Fatalf("Len() = %d after a failed KeepPath, was %d", s.Len(), n)
			}
			if tc.tree {
				expectIntact(t, s, seen, []int{30, 31, 32})
			} else {
				expectIntact(t, s, seen, nil)
			}
		})
	}
}

// expectIntact checks that s holds the positions seen and, when keep is
// not empty, a tree whose chain of nodes 0…len(keep)−1 holds keep: keeping
// it and evaluating one more token gives the logits of a new session
// evaluating seen, keep and that token.
func expectIntact(t *testing.T, s *Session, seen, keep []int) {
	t.Helper()
	if s.Len() != len(seen) {
		t.Fatalf("Len() = %d, want %d", s.Len(), len(seen))
	}
	if len(keep) > 0 {
		path := make([]int, len(keep))
		for i := range path {
			path[i] = i
		}
		if err := s.KeepPath(path); err != nil {
			t.Fatalf("the tree evaluated before is gone: KeepPath(%v): %v", path, err)
		}
	}
	got, err := s.Eval([]int{7})
	if err != nil {
		t.Fatal(err)
	}
	want, err := s.m.Session().Eval(append(append(append([]int(nil), seen...), keep...), 7))
	if err != nil {
		t.Fatal(err)
	}
	assertSame(t, "the next token's logits", got[0], want[len(want)-1])
}

// FuzzEvalTree feeds EvalTree and KeepPath arbitrary trees and paths on
// the tiny GPT-Neo (sliding window, learned positions): data[0] is the
// cached prompt's length, data[1] the number of nodes k, then k pairs of
// bytes (a node's parent as a signed byte, its token ×2 − 20, so that some
// fall outside the vocabulary), then the nodes of a path to keep. Nothing
// panics; an error leaves Len() and the logits that follow as they were;
// a tree that is accepted matches its paths, and what KeepPath keeps
// continues as the kept path evaluated with Eval.
func FuzzEvalTree(f *testing.F) {
	const root = 0xff // int8: −1
	f.Add([]byte{5, 1, root, 10})
	f.Add([]byte{5, 3, root, 10, 0, 11, 1, 12, 0, 1, 2})
	f.Add([]byte{0, 5, root, 9, 0, 10, 1, 11, 1, 12, root, 13, 0, 1, 3})
	f.Add([]byte{120, 8, root, 1, 0, 2, 1, 3, 2, 4, 3, 5, 4, 6, 5, 7, 6, 8, 0, 1, 2}) // 9 deep over 120: too deep
	f.Add([]byte{126, 4, root, 1, root, 2, root, 3, 1, 4, 1, 3})                      // slots past the context
	f.Add([]byte{3, 2, 1, 1, 0, 2})                                                   // a cycle
	f.Add([]byte{3, 2, root, 250, root, 12})                                          // a token past the vocabulary
	f.Add([]byte{3, 2, root, 10, 1, 11})                                              // its own parent
	f.Add([]byte{3, 3, root, 10, 0, 11, 0, 12, 0, 2})                                 // siblings kept as a chain
	f.Add([]byte{3, 3, root, 10, 0, 10, 0, 10, 0, 1})                                 // duplicate siblings
	m := familyModel("gpt_neo")(f)
	c := m.cfg
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 2 || len(data) > 2+2*64+64 {
			return
		}
		prompt := make([]int, int(data[0])%c.SeqLen)
		for i := range prompt {
			prompt[i] = (i*37 + 11) % c.Vocab
		}
		k := min(int(data[1]), (len(data)-2)/2)
		var tokens, parents, keep []int
		for i := range k {
			parents = append(parents, int(int8(data[2+2*i])))
			tokens = append(tokens, 2*int(data[3+2*i])-20)
		}
		for _, b := range data[2+2*k:] {
			keep = append(keep, int(b))
		}
		s := m.Session()
		if len(prompt) > 0 {
			if _, err := s.Eval(prompt); err != nil {
				t.Fatal(err)
			}
		}
		got, err := s.EvalTree(tokens, parents)
		if err != nil {
			if s.Len() != len(prompt) {
				t.Fatalf("EvalTree(%v, %v) failed (%v) and changed Len() to %d from %d", tokens, parents, err, s.Len(), len(prompt))
			}
			if err := s.KeepPath(nil); err == nil {
				t.Fatal("KeepPath after a failed EvalTree on a session that had no tree: no error")
			}
			expectIntact(t, s, prompt, nil)
			return
		}
		ref := m.Session()
		if len(prompt) > 0 {
			if _, err := ref.Eval(prompt); err != nil {
				t.Fatal(err)
			}
		}
		checkPaths(t, fmt.Sprintf("tree %v over %d positions", parents, len(prompt)), ref, prompt, tokens, parents, got)
		if err := s.KeepPath(keep); err != nil {
			if s.Len() != len(prompt) {
				t.Fatalf("KeepPath(%v) failed (%v) and changed Len() to %d", keep, err, s.Len())
			}
			keep = nil // the tree is still there; keep nothing
			if err := s.KeepPath(nil); err != nil {
				t.Fatalf("the tree is gone after KeepPath(%v) failed: %v", keep, err)
			}
		}
		if err := s.KeepPath(nil); err == nil {
			t.Fatal("a second KeepPath: no error (the tree should be gone)")
		}
		seen := append(append([]int(nil), prompt...), tokensOf(tokens, keep)...)
		if len(seen) < c.SeqLen {
			expectIntact(t, s, seen, nil)
		}
	})
}
