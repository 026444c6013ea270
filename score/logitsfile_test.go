package score

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"io"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/hlmproject/hlm/internal/sharedtest"
	"github.com/hlmproject/hlm/model/llama"
	"github.com/hlmproject/hlm/tokenizer"
)

// TestLogitsFileBytes pins the layout of a base file: a window of 4
// tokens over a vocabulary of 3 (rows of 2·2+4 = 8 words), one window,
// whose 4−1−2 = 1 scored position has one row.
func TestLogitsFileBytes(t *testing.T) {
	var b bytes.Buffer
	if err := WriteLogitsHeader(&b, 4, 3, 1, []int32{1, 7, 8, 9}); err != nil {
		t.Fatal(err)
	}
	if err := WriteRow16(&b, Row16{Scale: 0.5, Min: -2, Q: []uint16{0, 1, 0xfffe}}); err != nil {
		t.Fatal(err)
	}
	const want = "5f6c6f676974735f" + // "_logits_"
		"04000000" + "03000000" + "01000000" + // n_ctx 4, n_vocab 3, n_chunk 1
		"01000000" + "07000000" + "08000000" + "09000000" + // tokens
		"0000003f" + "000000c0" + // scale 0.5, min_log_prob −2
		"0000" + "0100" + "feff" + "0000" // steps, padding to an even count
	if got := hex.EncodeToString(b.Bytes()); got != want {
		t.Fatalf("bytes\n%s\nwant\n%s", got, want)
	}
	f, err := NewLogitsReader(&b)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := f.Next()
	if err != nil || len(rows) != 1 || rows[0].Scale != 0.5 || rows[0].Min != -2 || rows[0].Q[2] != 0xfffe || rows[0].LogProb(1) != -1.5 {
		t.Fatalf("rows %+v, %v", rows, err)
	}
	if _, err := f.Next(); err != io.EOF {
		t.Errorf("after the last window: %v", err)
	}
	if _, err := NewLogitsReader(bytes.NewReader([]byte("_logits!" + want[16:]))); !errors.Is(err, ErrMismatch) {
		t.Errorf("bad magic: %v", err)
	}
}

// FuzzLogitsReader: any bytes are read or refused, never a panic or a
// huge allocation (the header's sizes are limited before allocating).
func FuzzLogitsReader(f *testing.F) {
	var b bytes.Buffer
	WriteLogitsHeader(&b, 4, 3, 2, []int32{1, 2, 3, 4, 5, 6, 7, 8})
	WriteRow16(&b, Row16{Scale: 1, Min: -3, Q: []uint16{1, 2, 3}})
	WriteRow16(&b, Row16{Scale: 1, Min: -3, Q: []uint16{3, 2, 1}})
	f.Add(b.Bytes())
	f.Add([]byte("_logits_\xff\xff\xff\xff\x01\x00\x00\x00\x01\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := NewLogitsReader(bytes.NewReader(data))
		if err != nil {
			return
		}
		if len(r.Tokens) != r.Window*r.Chunks {
			t.Fatalf("%d tokens for %d windows of %d", len(r.Tokens), r.Chunks, r.Window)
		}
		for {
			rows, err := r.Next()
			if err != nil {
				return
			}
			for _, row := range rows {
				if len(row.Q) != r.Vocab {
					t.Fatalf("row of %d for a vocabulary of %d", len(row.Q), r.Vocab)
				}
			}
		}
	})
}

// TestLlamaCppBaseFile reads a base file llama.cpp wrote (testdata/make.sh:
// stories260K in F32, llama-perplexity -c 64 --chunks 2 with an F32 cache
// and no flash attention) and compares hlm's stories260K with it: the same
// tokens as hlm's encoding of the text, and, as llama.cpp compared its own
// model with the file (its chunk line after 2 windows: PPL 3.9322, ln ratio
// 0.00000, KLD 0.00000, same top 100%), the same numbers.
func TestLlamaCppBaseFile(t *testing.T) {
	modelPath := sharedtest.Path(t, "models/stories260K/stories260K.bin")
	textPath := sharedtest.Path(t, "data/tinystories/TinyStories-valid-sample.txt")
	m, err := llama.OpenSpec(modelPath, "")
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open("testdata/stories260K-c64.kld")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := NewLogitsReader(f)
	if err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(textPath)
	if err != nil {
		t.Fatal(err)
	}
	ids := m.Tokenizer().EncodeWith(strings.TrimSuffix(string(text), "\n"), tokenizer.EncodeOptions{AddSpecial: true, PlainSpecial: true})
	for i, id := range r.Tokens {
		if int(id) != ids[i] {
			t.Fatalf("token %d: llama.cpp %d, hlm %d", i, id, ids[i])
		}
	}
	k, err := DivergenceFile(context.Background(), r, m, m.Tokenizer().BOS(), nil)
	if err != nil {
		t.Fatal(err)
	}
	s := k.Summary()
	t.Logf("hlm against llama.cpp's F32 log-probabilities: %d positions, PPL %.6f, ln ratio %.2e, KLD %.2e (max %.2e), same top %.4f",
		s.Positions, s.PPL.Value, s.LogPPLRatio.Value, s.KLD.Value, s.KLDQuantiles.Max, s.SameTop.Value)
	if s.Positions != 62 || math.Abs(s.PPL.Value-3.9322) > 5e-5 || math.Abs(s.LogPPLRatio.Value) > 5e-6 ||
		math.Abs(s.KLD.Value) > 5e-6 || s.SameTop.Value != 1 {
		t.Errorf("hlm against llama.cpp's file: %+v", s)
	}
}
