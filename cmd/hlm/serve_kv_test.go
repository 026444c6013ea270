package main

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hlmproject/hlm/model/llama"
)

// TestAnnounceKV: hlm serve states what its sessions' KV caches may take,
// and warns when --max-sessions of them would not fit the machine.
func TestAnnounceKV(t *testing.T) {
	for _, c := range []struct {
		ram  int64
		say  string
		warn bool
	}{
		{0, "a session's KV cache takes up to 224 MiB (1024 positions in f32), 64 sessions up to 14.0 GiB (--max-sessions)", false},
		{32 << 30, "64 sessions up to 14.0 GiB", false},
		{8 << 30, "64 sessions up to 14.0 GiB", true},
	} {
		var say, log bytes.Buffer
		// Qwen3-0.6B: 28 layers, 8 KV heads of 128.
		announceKV(1024*28*1024*8, 1024, "f32", smallerCaches("f32", "f32", 128), 64, c.ram, slog.New(slog.NewTextHandler(&log, nil)), &say)
		if !strings.Contains(say.String(), c.say) {
			t.Errorf("ram %d: said %q, want %q in it", c.ram, say.String(), c.say)
		}
		if warned := strings.Contains(log.String(), "more than this machine's 8.00 GiB"); warned != c.warn {
			t.Errorf("ram %d: warned %v (%q), want %v", c.ram, warned, log.String(), c.warn)
		}
		if c.warn && !strings.Contains(log.String(), "@ctk=f16@ctv=f16 (2 bytes a value) or @ctk=q8_0@ctv=q8_0 (34 bytes per 32 values)") {
			t.Errorf("ram %d: the warning %q does not offer the half and Q8_0 caches", c.ram, log.String())
		}
	}
}

// TestAnnounceKVHalf: a serve of an LLM with half caches states their type
// and size (half of float32's), and its warning does not offer them again.
func TestAnnounceKVHalf(t *testing.T) {
	m, err := llama.OpenSpec("builtin:stories260K@ctk=f16@ctv=f16", "")
	if err != nil {
		t.Fatal(err)
	}
	var kv kvSizer = m
	k, v := kv.CacheTypes()
	var say, log bytes.Buffer
	announceKV(kv.KVBytes(512), 512, cacheTypes(k, v), smallerCaches(k, v, m.Config().HeadSize()), 64, 1<<20, slog.New(slog.NewTextHandler(&log, nil)), &say)
	// stories260K: 5 layers, 4 KV heads of 8; 512 positions × 2 bytes.
	if want := "takes up to 320 KiB (512 positions in f16)"; !strings.Contains(say.String(), want) {
		t.Errorf("said %q, want %q in it", say.String(), want)
	}
	if strings.Contains(log.String(), "ctk=f16") || !strings.Contains(log.String(), "lower --max-sessions") {
		t.Errorf("warned %q", log.String())
	}
	if got := cacheTypes("f16", "f32"); got != "keys in f16, values in f32" {
		t.Errorf("cacheTypes(f16, f32) = %q", got)
	}
}

// TestSmallerCaches: the cache types offered are those that take less
// memory than the ones in use and that the heads can take.
func TestSmallerCaches(t *testing.T) {
	const f16, q8 = "@ctk=f16@ctv=f16 (2 bytes a value)", "@ctk=q8_0@ctv=q8_0 (34 bytes per 32 values)"
	for _, c := range []struct {
		k, v string
		hs   int
		want string
	}{
		{"f32", "f32", 128, f16 + " or " + q8},
		{"f32", "f32", 8, f16},
		{"f16", "f32", 48, f16},
		{"f16", "f16", 64, q8},
		{"f16", "f16", 8, ""},
		{"q8_0", "f16", 64, q8},
		{"q8_0", "q8_0", 64, ""},
	} {
		if got := smallerCaches(c.k, c.v, c.hs); got != c.want {
			t.Errorf("smallerCaches(%s, %s, %d) = %q, want %q", c.k, c.v, c.hs, got, c.want)
		}
	}
}

func TestMemTotal(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		text string
		want int64
	}{
		{"MemTotal:       24601284 kB\nMemFree:         1234 kB\n", 24601284 << 10},
		{"MemFree: 1 kB\nMemTotal: 2048 kB", 2 << 20},
		{"MemTotal: 2048 MB\n", 0},
		{"MemTotal: -5 kB\n", 0},
		{"MemTotal:\n", 0},
		{"", 0},
	} {
		p := filepath.Join(dir, "meminfo")
		if err := os.WriteFile(p, []byte(c.text), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := memTotal(p); got != c.want {
			t.Errorf("%q: %d, want %d", c.text, got, c.want)
		}
	}
	if memTotal(filepath.Join(dir, "absent")) != 0 {
		t.Error("an absent file has memory")
	}
}
