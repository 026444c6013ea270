package codec

import (
	"math/rand/v2"
	"testing"
)

func TestVarLatticeRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	for _, l := range []int{1, 7, 100, 999} {
		x := make([]float64, 300)
		var s float64
		for i := range x {
			x[i] = rng.ExpFloat64()
			s += x[i]
		}
		for i := range x {
			x[i] /= s
		}
		enc, err := VarLattice{L: l}.Encode(x, -1)
		if err != nil {
			t.Fatal(err)
		}
		// The ℓ field: ℓ−1 in [0, MaxL−1] takes ⌈log2 MaxL⌉ = 14 bits.
		const header = 14
		plain, _ := Lattice{L: l}.Bits(len(x))
		if enc.Bits != plain+header || len(enc.Payload) != (enc.Bits+7)/8 {
			t.Errorf("ℓ=%d: %d bits (%d bytes), want %d", l, enc.Bits, len(enc.Payload), plain+header)
		}
		got, err := VarLattice{}.Decode(enc.Payload, len(x))
		if err != nil {
			t.Fatal(err)
		}
		for i := range got {
			if got[i] != enc.Recon[i] {
				t.Fatalf("ℓ=%d: decode differs from Recon at %d", l, i)
			}
		}
		// The upload's later drafts: the lattice alone, no ℓ field, decoded
		// by the codec the first payload names.
		rest := VarLattice{L: l}.Rest()
		enc2, err := rest.Encode(x, -1)
		if err != nil {
			t.Fatal(err)
		}
		if enc2.Bits != plain {
			t.Errorf("ℓ=%d: a later draft has %d bits, want the lattice's %d", l, enc2.Bits, plain)
		}
		dec, err := VarLattice{}.RestOf(enc.Payload)
		if err != nil {
			t.Fatal(err)
		}
		got, err = dec.Decode(enc2.Payload, len(x))
		if err != nil {
			t.Fatal(err)
		}
		for i := range got {
			if got[i] != enc2.Recon[i] {
				t.Fatalf("ℓ=%d: a later draft decodes differently from its Recon at %d", l, i)
			}
		}
	}
	if _, err := (VarLattice{}).RestOf(nil); err == nil {
		t.Error("RestOf of an empty payload: no error")
	}
}

func FuzzDecodeVarLattice(f *testing.F) {
	enc, _ := VarLattice{L: 5}.Encode([]float64{0.5, 0.25, 0.25}, -1)
	f.Add(enc.Payload, 3)
	f.Fuzz(func(t *testing.T, b []byte, v int) {
		if v < 1 || v > 5000 {
			return
		}
		VarLattice{}.Decode(b, v)
		if c, err := (VarLattice{}).RestOf(b); err == nil {
			c.Decode(b, v)
		}
	})
}
