package hybrid

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/hlmproject/hlm/model/builtin"
	"github.com/hlmproject/hlm/wire"
)

// treeUpload is the device's first tree-q-s upload for the prompt: a
// valid round the fuzzer's inputs start from.
func treeUpload(t testing.TB, p Params) (*wire.Upload, []int) {
	t.Helper()
	llm, slm := openPair(t, builtin.Prefix+"stories260K-draft")
	prompt := llm.Tokenizer().Encode("Once upon a time", true)
	d, err := NewDevice(p, slm, llm.Config().Vocab, prompt)
	if err != nil {
		t.Fatal(err)
	}
	st, err := d.Step(16)
	if err != nil {
		t.Fatal(err)
	}
	return st.Upload, prompt
}

// TestTreeUploadRefused: what is not a tree the server can verify is
// refused with an error that says why, and the session is intact: the
// valid upload still verifies afterwards, with the verdict it gets on a
// fresh server.
func TestTreeUploadRefused(t *testing.T) {
	p := DefaultParams()
	p.Method, p.Seed, p.TreeShape = TreeQS, 3, "3,2"
	good, prompt := treeUpload(t, p)
	if len(good.Drafts) < 4 {
		t.Fatalf("the valid tree has %d nodes", len(good.Drafts))
	}
	llm, slm := openPair(t, builtin.Prefix+"stories260K-draft")
	fresh := func() *Server {
		s, err := NewReplicaServer(p, llm, slm, prompt)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	want, _, err := fresh().Verify(good)
	if err != nil {
		t.Fatal(err)
	}
	clone := func() *wire.Upload {
		u := *good
		u.Drafts = slices.Clone(good.Drafts)
		u.Parents = slices.Clone(good.Parents)
		return &u
	}
	second := slices.IndexFunc(good.Parents[1:], func(p int32) bool { return p == -1 }) + 1 // the root's second candidate
	cases := []struct {
		name string
		edit func(u *wire.Upload)
		want string
	}{
		{"no tree", func(u *wire.Upload) { u.Parents = nil }, "sends a token tree"},
		{"a sibling carries a distribution", func(u *wire.Upload) {
			u.Drafts[second].Bits, u.Drafts[second].Payload = good.Drafts[0].Bits, good.Drafts[0].Payload
		}, "carries a distribution"},
		{"a first child without one", func(u *wire.Upload) { u.Drafts[0].Bits, u.Drafts[0].Payload = 0, nil }, "carries no distribution"},
		{"a candidate outside the support", func(u *wire.Upload) {
			x, _ := (fresh()).dec.Decode(good.Drafts[0].Payload, llm.Config().Vocab)
			u.Drafts[second].Token = int32(slices.Index(x, 0))
		}, "outside the support"},
		{"a child of a repeated candidate", func(u *wire.Upload) {
			u.Drafts[second].Token = u.Drafts[0].Token
			u.Drafts = append(u.Drafts, wire.Draft{Token: u.Drafts[0].Token, Bits: good.Drafts[0].Bits, Payload: good.Drafts[0].Payload})
			u.Parents = append(u.Parents, int32(second))
		}, "repeats an earlier candidate"},
		{"a parent after its child", func(u *wire.Upload) { u.Parents[0] = 2 }, "not an earlier node"},
		{"a token past the vocabulary", func(u *wire.Upload) { u.Drafts[1].Token = 1 << 20 }, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := fresh()
			u := clone()
			c.edit(u)
			if _, _, err := s.Verify(u); err == nil || c.want != "" && !containsFold(err.Error(), c.want) {
				t.Fatalf("err = %v, want one that says %q", err, c.want)
			}
			got, _, err := s.Verify(good)
			if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("after the refusal the valid upload gives %+v, %v; want %+v", got, err, want)
			}
		})
	}
}

func containsFold(s, sub string) bool {
	return strings.Contains(strings.ToLower(s), strings.ToLower(sub))
}

// FuzzTreeUpload: any upload body a hostile device sends a tree-q-s
// session either verifies or is refused; a refusal leaves the session as
// it was (the valid round still gets its verdict), and nothing panics.
func FuzzTreeUpload(f *testing.F) {
	p := DefaultParams()
	p.Method, p.Seed, p.TreeShape = TreeQS, 3, "3,2"
	good, prompt := treeUpload(f, p)
	llm, slm := openPair(f, builtin.Prefix+"stories260K-draft")
	vocab := llm.Config().Vocab
	f.Add(wire.AppendUpload(nil, good))
	bad := *good
	bad.Parents = slices.Clone(good.Parents)
	bad.Parents[len(bad.Parents)-1] = 0
	f.Add(wire.AppendUpload(nil, &bad))
	ref, err := NewReplicaServer(p, llm, slm, prompt)
	if err != nil {
		f.Fatal(err)
	}
	want, _, err := ref.Verify(good)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		up, err := wire.ParseUpload(b, vocab)
		if err != nil {
			return
		}
		s, err := NewReplicaServer(p, llm, slm, prompt)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.Verify(up); err == nil {
			return
		}
		if got, _, err := s.Verify(good); err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("after a refused upload the valid one gives %+v, %v; want %+v", got, err, want)
		}
	})
}
