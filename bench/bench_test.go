package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hlmproject/hlm/model"
	"github.com/hlmproject/hlm/model/llama"
	"github.com/hlmproject/hlm/model/llamacpp"
)

// tinyModel writes a random-weight llama2.c checkpoint and returns its path.
func tinyModel(t *testing.T) string {
	t.Helper()
	w, err := llama.RandomWeights(model.Config{Dim: 64, Hidden: 96, Layers: 2, Heads: 4, KVHeads: 2, Vocab: 100, SeqLen: 64}, 1)
	if err != nil {
		t.Fatal(err)
	}
	b, err := llama.WriteLlama2C(w)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "tiny.bin")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRunAndTable(t *testing.T) {
	p := tinyModel(t)
	cfg := DefaultConfig()
	cfg.Models = []string{p, p + "@q8"}
	cfg.Prompt, cfg.Gen, cfg.Reps, cfg.Threads, cfg.Sessions = []int{4}, []int{8}, 2, []int{1, 2}, []int{1, 3}
	rs, err := Run(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 2*2*2*2 {
		t.Fatalf("%d results, want 16", len(rs))
	}
	wantParams := int64(100*64 /* tied classifier */ + 2*(64*64*2+2*32*64+3*64*96) + 64*5)
	for _, r := range rs {
		if len(r.SamplesTS) != 2 || !(r.AvgTS > 0) || r.Params != wantParams {
			t.Errorf("%+v", r)
		}
	}
	if rs[0].Type != "F32" || rs[8].Type != "Q8_0" || rs[8].Size >= rs[0].Size {
		t.Errorf("types %s/%s, sizes %d/%d", rs[0].Type, rs[8].Type, rs[0].Size, rs[8].Size)
	}
	var md bytes.Buffer
	if err := WriteMarkdown(&md, rs); err != nil {
		t.Fatal(err)
	}
	// The columns side-by-side.sh reads: test, then t/s as "mean ± sd".
	lines := strings.Split(md.String(), "\n")
	if !strings.HasPrefix(lines[0], "| model ") || !strings.HasSuffix(lines[0], " t/s |") {
		t.Fatalf("header %q", lines[0])
	}
	seen := map[string]bool{}
	for _, l := range lines[2:18] {
		f := strings.Split(l, "|")
		test := strings.TrimSpace(f[len(f)-3])
		ts := strings.Split(strings.ReplaceAll(f[len(f)-2], " ", ""), "±")
		if _, err := strconv.ParseFloat(ts[0], 64); err != nil || len(ts) != 2 {
			t.Errorf("row %q: t/s column %q", l, f[len(f)-2])
		}
		seen[test] = true
	}
	for _, want := range []string{"pp4", "tg8", "pp4 ×3 sessions", "tg8 ×3 sessions"} {
		if !seen[want] {
			t.Errorf("no %q row in\n%s", want, md.String())
		}
	}
	cfg.Models, cfg.Threads, cfg.Sessions, cfg.Gen, cfg.AllLogits = cfg.Models[:1], []int{1}, []int{1}, nil, true
	vb, err := Run(context.Background(), cfg, nil)
	if err != nil || len(vb) != 1 || vb[0].Test != "vb4" {
		t.Fatalf("--all-logits: %v, %+v", err, vb)
	}
	var js bytes.Buffer
	if err := WriteJSON(&js, rs); err != nil {
		t.Fatal(err)
	}
	var back []Result
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || len(back) != len(rs) {
		t.Fatalf("JSON round trip: %v, %d results", err, len(back))
	}
}

// TestDepth: -d runs each test after that many positions in the cache,
// named as llama-bench names it, on a half cache (ctk=f16@ctv=f16) too.
func TestDepth(t *testing.T) {
	p := tinyModel(t)
	cfg := DefaultConfig()
	cfg.Models = []string{p, p + "@ctk=f16@ctv=f16"}
	cfg.Prompt, cfg.Gen, cfg.Depth, cfg.Reps, cfg.Threads = []int{4}, []int{4}, []int{0, 48}, 1, []int{1}
	rs, err := Run(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range rs[:4] {
		names = append(names, r.Test)
	}
	if want := []string{"pp4", "pp4 @ d48", "tg4", "tg4 @ d48"}; !slices.Equal(names, want) {
		t.Fatalf("tests %q, want %q", names, want)
	}
	if rs[1].Depth != 48 || rs[0].Depth != 0 || !strings.HasSuffix(rs[4].Model, "@ctk=f16@ctv=f16") {
		t.Fatalf("results %+v", rs)
	}
}

func TestValidateAndErrors(t *testing.T) {
	p := tinyModel(t)
	for _, c := range []Config{
		{},
		{Models: []string{p}, Reps: 1, Threads: []int{1}, Sessions: []int{1}},
		{Models: []string{p}, Prompt: []int{-1}, Reps: 1, Threads: []int{1}, Sessions: []int{1}},
		{Models: []string{p}, Prompt: []int{8}, Reps: 0, Threads: []int{1}, Sessions: []int{1}},
		{Models: []string{p}, Prompt: []int{8}, Reps: 1, Threads: []int{0}, Sessions: []int{1}},
		{Models: []string{p + "@llama.cpp"}, Prompt: []int{8}, Reps: 1, Threads: []int{1}, Sessions: []int{1}, Kernels: []string{"portable"}},
	} {
		if err := c.Validate(); err == nil {
			t.Errorf("Validate(%+v) = nil", c)
		}
	}
	cfg := DefaultConfig()
	cfg.Models, cfg.Prompt, cfg.Gen = []string{p}, []int{65}, nil
	if _, err := Run(context.Background(), cfg, nil); err == nil || !strings.Contains(err.Error(), "context length") {
		t.Errorf("a block longer than the context: %v", err)
	}
	cfg.Prompt, cfg.Gen, cfg.Depth = []int{8}, nil, []int{57}
	if _, err := Run(context.Background(), cfg, nil); err == nil || !strings.Contains(err.Error(), "depth 57") {
		t.Errorf("a block past the context after its depth: %v", err)
	}
	cfg.Depth = []int{-1}
	if err := cfg.Validate(); err == nil {
		t.Error("a negative depth passed Validate")
	}
	cfg.Depth = nil
	cfg.Models, cfg.Prompt = []string{filepath.Join(t.TempDir(), "missing.gguf")}, []int{8}
	if _, err := Run(context.Background(), cfg, nil); err == nil {
		t.Error("a missing model gave no error")
	}
}

func TestTypeMix(t *testing.T) {
	for _, c := range []struct {
		in   map[string]int64
		want string
	}{
		{nil, "F32"},
		{map[string]int64{"Q8_0": 10}, "Q8_0"},
		{map[string]int64{"Q6_K": 5, "Q4_K": 50, "Q5_0": 5}, "Q4_K+Q5_0+Q6_K"},
		{map[string]int64{"Q5_0": 60, "Q4_K": 20, "Q8_0": 1}, "Q5_0+Q4_K+Q8_0"},
	} {
		if got := typeMix(c.in); got != c.want {
			t.Errorf("typeMix(%v) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestWriteCSV pins the CSV form (hlm bench -o csv): a header of the JSON
// names, one row per result, samples joined with ';', fields quoted only
// where CSV needs it.
func TestWriteCSV(t *testing.T) {
	rs := []Result{{Model: "a,b.gguf", Type: "Q8_0", Size: 1024, Params: 300, Kernels: "avx2", Threads: 2, Sessions: 1,
		Prompt: 8, Test: "pp8", SamplesNs: []int64{100, 200}, SamplesTS: []float64{80, 40.5}, AvgTS: 60.25, StddevTS: 28.1}}
	var b bytes.Buffer
	if err := WriteCSV(&b, rs); err != nil {
		t.Fatal(err)
	}
	want := "model_filename,model_type,model_size,model_n_params,kernels,n_threads,n_sessions,n_prompt,n_gen,n_depth,test,samples_ns,samples_ts,avg_ts,stddev_ts\n" +
		"\"a,b.gguf\",Q8_0,1024,300,avx2,2,1,8,0,0,pp8,100;200,80;40.5,60.25,28.1\n"
	if b.String() != want {
		t.Errorf("CSV\n%s\nwant\n%s", b.String(), want)
	}
	// Every JSON field has its column.
	js, _ := json.Marshal(rs[0])
	var fields map[string]any
	json.Unmarshal(js, &fields)
	if len(fields) != len(csvColumns) {
		t.Errorf("%d JSON fields, %d CSV columns", len(fields), len(csvColumns))
	}
	for _, c := range csvColumns {
		if _, ok := fields[c]; !ok {
			t.Errorf("CSV column %q is no JSON field", c)
		}
	}
}

// TestRunLlamaCpp runs the tests on the llama.cpp backend (skipped without
// libllama): prompt and generation, one and several sessions, repeated —
// each evaluation leaves its rows in llama.cpp's buffer and releases them,
// so a release forgotten would hang the next one (the test's timeout).
func TestRunLlamaCpp(t *testing.T) {
	if _, ok := llamacpp.LibraryPath(); !ok {
		t.Skip("no libllama: run internal/libllama/build.sh (about 4 minutes on 2 cores; CI does) or set HLM_LLAMA_LIB")
	}
	cfg := DefaultConfig()
	cfg.Models = []string{filepath.Join("..", "model", "llama", "testdata", "families", "qwen3.gguf") + "@llama.cpp@ngl=0@c=64@np=2"}
	cfg.Prompt, cfg.Gen, cfg.Reps, cfg.Threads, cfg.Sessions = []int{4}, []int{6}, 2, []int{2}, []int{1, 2}
	rs, err := Run(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 4 {
		t.Fatalf("%d results, want 4", len(rs))
	}
	for _, r := range rs {
		if len(r.SamplesTS) != 2 || !(r.AvgTS > 0) {
			t.Errorf("%+v", r)
		}
	}
}
