package uregex

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// benchText is English and code: the Go specification (prose in HTML) and
// net/http's server.go from the Go installation, about 400 kB, or the
// corpus repeated when they are not there.
func benchText(b testing.TB) string {
	b.Helper()
	var parts []string
	if root, err := exec.Command("go", "env", "GOROOT").Output(); err == nil {
		for _, f := range []string{"doc/go_spec.html", "src/net/http/server.go"} {
			data, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(root)), f))
			if err == nil {
				parts = append(parts, string(data))
			}
		}
	}
	if len(parts) < 2 {
		parts = []string{strings.Repeat(strings.Join(corpusTexts[:20], " "), 400)}
	}
	return strings.Join(parts, "\n")
}

// multilingualText is the hand-written corpus (CJK, emoji, RTL, marks,
// …), repeated to about 400 kB.
func multilingualText() string {
	one := strings.Join(corpusTexts, "\n")
	return strings.Repeat(one, 400_000/len(one)+1)
}

// BenchmarkFindAll splits English and code with every listed pattern.
//
//	go test -run '^$' -bench FindAll ./tokenizer/internal/uregex/
func BenchmarkFindAll(b *testing.B) {
	text := benchText(b)
	for _, p := range preTokenizerPatterns {
		b.Run(p.name, func(b *testing.B) { benchPattern(b, p.expr, text) })
	}
}

// BenchmarkFindAllMultilingual splits the multilingual corpus with the
// main patterns.
func BenchmarkFindAllMultilingual(b *testing.B) {
	text := multilingualText()
	for _, name := range []string{"gpt2", "llama3", "qwen2", "qwen35", "deepseek3_llm-3", "tekken", "gpt4o", "kimi_k2-tiktoken"} {
		b.Run(name, func(b *testing.B) { benchPattern(b, patternByName(name), text) })
	}
}

func benchPattern(b *testing.B, expr, text string) {
	re, err := Compile(expr)
	if err != nil {
		b.Fatal(err)
	}
	dst, err := re.FindAll(text, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	// The process's CPU time, besides the wall time, gives a speed that
	// other processes on a busy machine distort less.
	cpu0, cpuOK := processCPU()
	b.ResetTimer()
	for b.Loop() {
		if dst, err = re.FindAll(text, dst[:0]); err != nil {
			b.Fatal(err)
		}
	}
	sec := b.Elapsed().Seconds()
	b.ReportMetric(float64(len(text))*float64(b.N)/sec/1e6, "MB/s")
	b.ReportMetric(sec*1e9/float64(b.N)/float64(max(len(dst), 1)), "ns/match")
	if cpu1, ok := processCPU(); ok && cpuOK && cpu1 > cpu0 {
		b.ReportMetric(float64(len(text))*float64(b.N)/(cpu1-cpu0)/1e6, "cpu-MB/s")
	}
}
