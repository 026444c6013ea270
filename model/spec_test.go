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
		{in: "m@exit=0", err: true},
		{in: "m@exit=x", err: true},
		{in: "m@exit", err: true},
		{in: "m@q8=1", err: true},
		{in: "m@fast", err: true},
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
