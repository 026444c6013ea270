package model

import (
	"strings"
	"testing"
)

func TestParseSpecLlamaCpp(t *testing.T) {
	lc := func(o LlamaCppOptions) Spec {
		return Spec{Path: "m.gguf", Backend: BackendLlamaCpp, LlamaCpp: o}
	}
	for _, tc := range []struct {
		in   string
		want Spec
		err  string // a part of the error, "" for none
	}{
		{in: "m.gguf@llama.cpp", want: lc(LlamaCppOptions{GPULayers: -1})},
		{in: "m.gguf@llama.cpp@ngl=0", want: lc(LlamaCppOptions{})},
		{in: "m.gguf@ngl=20@llama.cpp", want: lc(LlamaCppOptions{GPULayers: 20})},
		{in: "m.gguf@llama.cpp@ngl=all", want: lc(LlamaCppOptions{GPULayers: -1})},
		{in: "m.gguf@llama.cpp,np=8,c=2048,t=2", want: lc(LlamaCppOptions{GPULayers: -1, Slots: 8, Context: 2048, Threads: 2})},
		{in: "m.gguf@llama.cpp@sm=row@ts=3,1@mg=1", want: lc(LlamaCppOptions{GPULayers: -1, SplitMode: "row", TensorSplit: "3,1", MainGPU: 1})},
		{in: "m.gguf@llama.cpp@tensor-split=0.5,0.25,0.25", want: lc(LlamaCppOptions{GPULayers: -1, TensorSplit: "0.5,0.25,0.25"})},
		{in: "m.gguf@llama.cpp@rpc=10.0.0.2:50052,[::1]:50053", want: lc(LlamaCppOptions{GPULayers: -1, RPC: "10.0.0.2:50052,[::1]:50053"})},
		{in: "m.gguf@llama.cpp@ub=64@fa=auto", want: lc(LlamaCppOptions{GPULayers: -1, UBatch: 64, FlashAttn: "auto"})},
		{in: "m.gguf@llama.cpp@ctk=f32@ctv=q8_0@fa=on", want: Spec{Path: "m.gguf", Backend: BackendLlamaCpp, CacheTypeK: "f32", CacheTypeV: "q8_0", LlamaCpp: LlamaCppOptions{GPULayers: -1, FlashAttn: "on"}}},
		{in: "m.gguf@cache-type-k=bf16@llama.cpp", want: Spec{Path: "m.gguf", Backend: BackendLlamaCpp, CacheTypeK: "bf16", LlamaCpp: LlamaCppOptions{GPULayers: -1}}},
		// hlm's engine takes f32 and f16, and no other type of llama.cpp's.
		{in: "m.gguf@ctk=f16@ctv=f16", want: Spec{Path: "m.gguf", CacheTypeK: "f16", CacheTypeV: "f16"}},
		{in: "m.bin@exit=2,q8,ctv=f32", want: Spec{Path: "m.bin", Exit: 2, Quantize: "q8", CacheTypeV: "f32"}},
		{in: "m.gguf@ctk=q8_0@ctv=q8_0", want: Spec{Path: "m.gguf", CacheTypeK: "q8_0", CacheTypeV: "q8_0"}},
		{in: "m.gguf@ctk=bf16", err: "hlm's engine keeps its cache in f32 (its default), f16 or q8_0"},
		{in: "m.gguf@ctv=bf16", err: "hlm's engine keeps its cache in f32"},
		{in: "m.gguf@ctk=f16@cache-type-k=f16", err: "given twice"},
		{in: "m.gguf@ctk=f16@np=2", err: "add @llama.cpp"},
		{in: "m.gguf@llama.cpp@ctk=q4_1", err: "ctk wants"},
		{in: "m.gguf@llama.cpp@repack=off", want: lc(LlamaCppOptions{GPULayers: -1, Repack: "off"})},
		{in: "m.gguf@llama.cpp@repack", err: "repack wants"},
		{in: "m.gguf@llama.cpp@lm=none", want: lc(LlamaCppOptions{GPULayers: -1, LoadMode: "none"})},
		{in: "m.gguf@llama.cpp@load-mode=mmap+mlock", want: lc(LlamaCppOptions{GPULayers: -1, LoadMode: "mmap+mlock"})},
		{in: "m.gguf@llama.cpp@lm=no-mmap", err: "lm wants one of auto, none, mmap, mlock, mmap+mlock, dio"},
		{in: "m.gguf@lm=none", err: "add @llama.cpp"},
		{in: "dir@x/m.gguf@llama.cpp@np=2", want: Spec{Path: "dir@x/m.gguf", Backend: BackendLlamaCpp, LlamaCpp: LlamaCppOptions{GPULayers: -1, Slots: 2}}},
		{in: "m.gguf@ngl=2", err: "add @llama.cpp"},
		{in: "m.gguf@np=2,q8", err: "add @llama.cpp"},
		{in: "m.gguf@llama.cpp@exit=2", err: "early exit"},
		{in: "m.gguf@llama.cpp@q8", err: "llama-quantize"},
		{in: "m.gguf@llama.cpp=1", err: "takes no value"},
		{in: "m.gguf@llama.cpp@np=0", err: "np wants"},
		{in: "m.gguf@llama.cpp@np=257", err: "np wants"},
		{in: "m.gguf@llama.cpp@c=0", err: "c wants"},
		{in: "m.gguf@llama.cpp@c=99999999", err: "c wants"},
		{in: "m.gguf@llama.cpp@ub=x", err: "ub wants"},
		{in: "m.gguf@llama.cpp@sm=diagonal", err: "sm wants"},
		{in: "m.gguf@llama.cpp@fa", err: "fa wants"},
		{in: "m.gguf@llama.cpp@ts=3,x", err: "not a number"},
		{in: "m.gguf@llama.cpp@ts=-1", err: "not a number"},
		{in: "m.gguf@llama.cpp@ts=", err: "proportions"},
		{in: "m.gguf@llama.cpp@rpc=host", err: "not host:port"},
		{in: "m.gguf@llama.cpp@rpc=host:0", err: "port"},
		{in: "m.gguf@llama.cpp@ngl=-2", err: "ngl wants"},
		{in: "m.gguf@llama.cpp@ngl=1@ngl=2", err: "option ngl given twice (as ngl and ngl)"},
		{in: "m.gguf@llama.cpp@ts=1,1@tensor-split=2", err: "option ts given twice (as ts and tensor-split)"},
	} {
		got, err := ParseSpec(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseSpec(%q) = %+v, %v; want an error with %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseSpec(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
			continue
		}
		if back, err := ParseSpec(got.String()); err != nil || back != got {
			t.Errorf("round trip of %q through %q: %+v, %v", tc.in, got.String(), back, err)
		}
	}
}

func TestLlamaCppLists(t *testing.T) {
	sp, err := ParseSpec("m.gguf@llama.cpp@ts=3,1.5@rpc=a:1,b:2")
	if err != nil {
		t.Fatal(err)
	}
	if got := sp.LlamaCpp.TensorSplitValues(); len(got) != 2 || got[0] != 3 || got[1] != 1.5 {
		t.Errorf("TensorSplitValues = %v, want [3 1.5]", got)
	}
	if got := sp.LlamaCpp.RPCEndpoints(); len(got) != 2 || got[0] != "a:1" || got[1] != "b:2" {
		t.Errorf("RPCEndpoints = %v, want [a:1 b:2]", got)
	}
}

// FuzzParseSpec holds the parser to three properties on any input: no
// panic; a spec it accepts prints back (String) to one that parses to the
// same value (unless the file name itself holds '@', which has no spelling
// with options); and llama.cpp options never come without the backend.
func FuzzParseSpec(f *testing.F) {
	for _, s := range []string{
		"m.bin", "dir/m.bin@exit=2", "m.gguf@exit=3,q4", "weird@name.bin@", "a@b/m.gguf@exit=1",
		"m.gguf@llama.cpp", "m.gguf@llama.cpp@ngl=99@sm=row@ts=3,1@mg=1@rpc=h:1,g:2@t=2@c=128@np=4@ub=8@fa=off@ctk=f32@ctv=bf16@repack=on@lm=none",
		"m.gguf@llama.cpp,np=2", "m@ts=1", "@", "m@@", "m@llama.cpp@ts=,,", "x/@llama.cpp",
		"m.gguf@ctk=f16@ctv=f16", "m.bin@exit=2,ctv=f16", "m.gguf@ctk=q8_0", "m.gguf@ctk=bf16@ctv=q8_0", "w@x.bin@ctk=f16",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sp, err := ParseSpec(s)
		if err != nil {
			return
		}
		if sp.Backend != BackendLlamaCpp && sp.LlamaCpp != (LlamaCppOptions{}) {
			t.Fatalf("ParseSpec(%q) = %+v: llama.cpp options without the backend", s, sp)
		}
		if sp.Backend == BackendLlamaCpp && (sp.Exit != 0 || sp.Quantize != "") {
			t.Fatalf("ParseSpec(%q) = %+v: an hlm view on the llama.cpp backend", s, sp)
		}
		for _, c := range []string{sp.CacheTypeK, sp.CacheTypeV} {
			if sp.Backend == "" && c != "" && c != "f32" && c != "f16" && c != "q8_0" {
				t.Fatalf("ParseSpec(%q) = %+v: a cache type hlm's engine lacks", s, sp)
			}
		}
		last := sp.Path[strings.LastIndexAny(sp.Path, `/\`)+1:]
		if strings.Contains(last, "@") && (sp.Exit != 0 || sp.Quantize != "" || sp.Backend != "" || sp.CacheTypeK != "" || sp.CacheTypeV != "") {
			return
		}
		back, err := ParseSpec(sp.String())
		if err != nil || back != sp {
			t.Fatalf("ParseSpec(%q) = %+v; its String %q parses to %+v, %v", s, sp, sp.String(), back, err)
		}
	})
}

// TestLlamaCppKeysListed: every short name the unknown-option error lists
// is an option setLlamaCpp takes, and the error lists them.
func TestLlamaCppKeysListed(t *testing.T) {
	for _, k := range llamaCppKeys {
		var sp Spec
		if ok, _ := sp.setLlamaCpp(k, "", false); !ok {
			t.Errorf("llamaCppKeys lists %q, which setLlamaCpp does not take", k)
		}
		if llamaCppHelp[k] == "" || !strings.Contains(LlamaCppHelp(), "  "+k+" ") {
			t.Errorf("option %s has no help line", k)
		}
	}
	if len(llamaCppHelp) != len(llamaCppKeys) {
		t.Errorf("%d help lines for %d options", len(llamaCppHelp), len(llamaCppKeys))
	}
	if _, err := ParseSpec("m.gguf@llama.cpp@ctv=q8_0"); err == nil || !strings.Contains(err.Error(), "needs fa=on") {
		t.Errorf("ctv=q8_0 without fa=on: %v", err)
	}
	if _, err := ParseSpec("m.gguf@llama.cpp@ctv=q8_0@fa=on"); err != nil {
		t.Errorf("ctv=q8_0 with fa=on: %v", err)
	}
	for _, s := range []string{"m.gguf@llama.cpp,np=8,ts=3,1", "m.gguf@llama.cpp@np=8,rpc=h:1,h:2"} {
		if _, err := ParseSpec(s); err == nil || !strings.Contains(err.Error(), "segment of its own") {
			t.Errorf("ParseSpec(%q): %v; want the list option's own segment asked for", s, err)
		}
	}
	_, err := ParseSpec("m.gguf@llama.cpp@ngls=99")
	if err == nil || !strings.Contains(err.Error(), `unknown option "ngls=99"`) || !strings.Contains(err.Error(), strings.Join(llamaCppKeys, ", ")) {
		t.Errorf("ParseSpec(ngls=99): %v; want the unknown option and the llama.cpp options named", err)
	}
}

// TestLlamaCppAliasesTwice: each long name of llama.cpp's is the option
// of its short name, so giving both is refused as the same option given
// twice (an alias missing from llamaCppAliases would pass).
func TestLlamaCppAliasesTwice(t *testing.T) {
	val := map[string]string{"ngl": "1", "sm": "row", "ts": "1", "mg": "0", "t": "1", "c": "8", "np": "1", "ub": "8", "fa": "on", "ctk": "f16", "ctv": "f16", "lm": "none"}
	for alias, short := range llamaCppAliases {
		v, ok := val[short]
		if !ok {
			t.Fatalf("no value for %s", short)
		}
		if _, err := ParseSpec("m.gguf@llama.cpp@" + alias + "=" + v); err != nil {
			t.Errorf("%s=%s alone: %v", alias, v, err)
		}
		_, err := ParseSpec("m.gguf@llama.cpp@" + short + "=" + v + "@" + alias + "=" + v)
		if err == nil || !strings.Contains(err.Error(), "option "+short+" given twice") {
			t.Errorf("%s and %s: %v", short, alias, err)
		}
	}
}
