package model

import "testing"

func TestParseSpec(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Spec
		err  bool
	}{
		{in: "m.bin", want: Spec{Path: "m.bin"}},
		{in: "dir/m.bin@exit=2", want: Spec{Path: "dir/m.bin", Exit: 2}},
		{in: "m.gguf@q8", want: Spec{Path: "m.gguf", Quantize: "q8"}},
		{in: "m.gguf@exit=3@q8", want: Spec{Path: "m.gguf", Exit: 3, Quantize: "q8"}},
		{in: "m.gguf@exit=3,q4", want: Spec{Path: "m.gguf", Exit: 3, Quantize: "q4"}},
		{in: "", err: true},
		{in: "@exit=2", err: true},
		{in: "node_modules/@lenml/tok/models", want: Spec{Path: "node_modules/@lenml/tok/models"}},
		{in: "a@b/m.gguf@exit=1", want: Spec{Path: "a@b/m.gguf", Exit: 1}},
		{in: "weird@name.bin@", want: Spec{Path: "weird@name.bin"}},
		{in: "m@exit=0", err: true},
		{in: "m@exit=x", err: true},
		{in: "m@exit", err: true},
		{in: "m@q8=1", err: true},
		{in: "m@fast", err: true},
		// A stray trailing '@' after options (no such file): refused,
		// where it was read as one file name.
		{in: "absent.gguf@llama.cpp@", err: true},
		{in: "absent.gguf@q8@", err: true},
		{in: "m.gguf@llama.cpp@llama.cpp", err: true},
	} {
		got, err := ParseSpec(tc.in)
		if (err != nil) != tc.err {
			t.Errorf("ParseSpec(%q) error = %v, want error %v", tc.in, err, tc.err)
			continue
		}
		if err == nil && got != tc.want {
			t.Errorf("ParseSpec(%q) = %+v, want %+v", tc.in, got, tc.want)
		}
		if err == nil {
			if back, err := ParseSpec(got.String()); err != nil || back != got {
				t.Errorf("round trip of %q: %+v, %v", tc.in, back, err)
			}
		}
	}
}

func TestMACs(t *testing.T) {
	// stories260K: dim 64, hidden 172, 5 layers, 8 heads, 4 KV heads, vocab 512.
	c := Config{Dim: 64, Hidden: 172, Layers: 5, Heads: 8, KVHeads: 4, Vocab: 512}
	// per layer: q 4096 + k 2048 + v 2048 + o 4096 + ffn 3·172·64 = 33024 → 45312;
	// attention at position 0: 2·64·1 = 128; classifier 512·64 = 32768.
	if got, want := c.MACs(0), int64(5*(45312+128)+32768); got != want {
		t.Errorf("MACs(0) = %d, want %d", got, want)
	}
	if got, want := c.MACs(99)-c.MACs(0), int64(5*2*64*99); got != want {
		t.Errorf("attention growth over 99 positions = %d, want %d", got, want)
	}
}
