package chat

import (
	"os"
	"sync"
	"testing"
)

// BenchmarkRender renders testdata/golden/chatml-tools.jinja over the
// tool-calling conversation (5 messages, 2 tools): the work of one chat
// request.
func BenchmarkRender(b *testing.B) {
	src, err := os.ReadFile("testdata/golden/chatml-tools.jinja")
	if err != nil {
		b.Fatal(err)
	}
	tmpl, err := Parse(string(src))
	if err != nil {
		b.Fatal(err)
	}
	var in Input
	for _, c := range loadConversations(b) {
		if c.Name == "tool-calls-string-args" {
			in = c.input(refTemplate{bos: "<s>", eos: "</s>"})
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tmpl.Render(in); err != nil {
			b.Fatal(err)
		}
	}
}

// TestConcurrentRenders renders one template from many goroutines (run
// with -race): a Template holds nothing a render changes.
func TestConcurrentRenders(t *testing.T) {
	src, err := os.ReadFile("testdata/golden/chatml-tools.jinja")
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := Parse(string(src))
	if err != nil {
		t.Fatal(err)
	}
	convs := loadConversations(t)
	want := make([]string, len(convs))
	for i, c := range convs {
		want[i], _ = tmpl.Render(c.input(refTemplate{}))
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i, c := range convs {
				if got, _ := tmpl.Render(c.input(refTemplate{})); got != want[i] {
					t.Errorf("%s: a concurrent render differs", c.Name)
				}
			}
		}()
	}
	wg.Wait()
}
