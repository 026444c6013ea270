package hybrid

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/hlmproject/hlm/importance"
	"github.com/hlmproject/hlm/model"
	"github.com/hlmproject/hlm/policy"
)

// skipRecorder records the tokens an upload rule is asked about and skips
// every one (so that the device drafts on without a server).
type skipRecorder struct{ toks []policy.Token }

func (r *skipRecorder) Upload(t policy.Token, _ *rand.Rand) bool {
	r.toks = append(r.toks, t)
	return false
}

// TestImportanceReadsTheDraftsRow: the attention row the importance rule
// judges is the draft token's own, over the tokens before it — U+I
// Sec. III-B: "A_i = [a_{i,1}, …, a_{i,i−1}] … the attention from the
// draft token to all preceding tokens", thresholded by eq. 6 — not the
// row of the last committed token (the draft's position not evaluated
// yet), and not with the draft's attention to itself. The reference is
// a fresh session of the draft model that evaluates prefix + draft at
// once. Step.Imp is the count of that row above θ_imp (eq. 6).
func TestImportanceReadsTheDraftsRow(t *testing.T) {
	llm, slm := openPair(t, stories+"@exit=2")
	prompt := llm.Tokenizer().Encode("Tom had a red car", true)
	for _, method := range []string{IHLM, UIHLM} {
		p := DefaultParams()
		p.Method = method
		d, err := NewDevice(p, slm, llm.Config().Vocab, prompt)
		if err != nil {
			t.Fatal(err)
		}
		rec := &skipRecorder{}
		d.uploader = rec
		var imps []int
		for range 4 {
			st, err := d.Step(16)
			if err != nil {
				t.Fatal(err)
			}
			if st.Upload != nil {
				t.Fatalf("%s: uploaded although the rule skipped", method)
			}
			imps = append(imps, st.Imp)
		}
		seq := d.Sequence()
		for i, tok := range rec.toks {
			if tok.Pos >= len(seq) || seq[tok.Pos] != tok.Draft {
				t.Fatalf("%s: token %d: position %d does not hold the draft %d", method, i, tok.Pos, tok.Draft)
			}
			if len(tok.Attention) != tok.Pos {
				t.Fatalf("%s: token %d at position %d: attention row of %d weights, want %d (the draft's row over the tokens before it)",
					method, i, tok.Pos, len(tok.Attention), tok.Pos)
			}
			s := slm.NewSession()
			s.SetCapture(model.CaptureLastLayer)
			if _, err := s.Eval(seq[:tok.Pos+1]); err != nil {
				t.Fatal(err)
			}
			row := s.Attention().Last()
			want := row[:len(row)-1]
			for j := range want {
				if math.Abs(float64(tok.Attention[j]-want[j])) > 1e-5 {
					t.Fatalf("%s: token %d: weight %d = %v, want %v (the draft's row)", method, i, j, tok.Attention[j], want[j])
				}
			}
			if w := importance.CountAbove(want, importance.Threshold(want, p.Gamma)); imps[i] != w {
				t.Errorf("%s: token %d: Step.Imp = %d, want %d weights above θ_imp", method, i, imps[i], w)
			}
		}
	}
}
