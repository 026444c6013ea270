package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/hlmproject/hlm/internal/words"
	"github.com/hlmproject/hlm/model"
	"github.com/hlmproject/hlm/model/builtin"
	"github.com/hlmproject/hlm/model/gguf"
)

func init() {
	register("inspect", "show a model file: a GGUF's metadata and tensor types, or any model's shape as hlm reads it", runInspect)
}

func runInspect(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("inspect", "[--model SPEC] [--tensors] [--json]", `
Show what a model file holds. For a GGUF file: its version, every metadata
key with its value (long arrays shortened, as the tokenizer's), the origin
hlm records in the files it writes (hlm.origin: the model a quantized or
converted copy was made from, by which it finds its shipped draft), and its
tensors counted by type with their bytes; --tensors lists each tensor.
For any model spec hlm opens (a llama2.c .bin, a Hugging Face directory,
builtin:NAME, @q8/@q4, PATH.gguf@llama.cpp): its shape as hlm reads it —
architecture, widths, layers, heads, vocabulary, context —, on hlm's
engine the memory of a session's KV cache (per position and at the full
context, in the spec's ctk/ctv types), and its origin fingerprint. --json
prints the same as JSON.`, stdout)
	spec := fs.String("model", builtin.DefaultLLM, "model spec or GGUF file to show")
	alias(fs, "m", "model")
	tensors := fs.Bool("tensors", false, "list every tensor of a GGUF file (name, type, dims, bytes)")
	asJSON := fs.Bool("json", false, "print JSON instead of text")
	if err := parse(fs, args); err != nil {
		return err
	}
	if gguf.IsFile(*spec) { // a GGUF file itself, no @options
		return inspectGGUF(*spec, *tensors, *asJSON, stdout)
	}
	if *tensors {
		return usageError{fmt.Errorf("--tensors lists a GGUF file's tensors; %s is not one (hlm convert writes one)", *spec)}
	}
	m, err := openModel(ctx, "the model", *spec, "")
	if err != nil {
		return err
	}
	if c, ok := m.(io.Closer); ok {
		defer c.Close()
	}
	info := modelInfo{Name: m.Name(), Config: m.Config(), Origin: model.OriginOf(m), Fingerprint: m.Fingerprint()}
	kv, onOwnEngine := m.(interface {
		kvSizer
		KVPositionBytes() int64
	})
	if onOwnEngine {
		info.KVPerPosition, info.KVContext = kv.KVPositionBytes(), kv.KVBytes(info.Config.SeqLen)
		info.KVTypes[0], info.KVTypes[1] = kv.CacheTypes()
	}
	if *asJSON {
		return writeJSON(stdout, info)
	}
	c := info.Config
	fmt.Fprintf(stdout, "model: %s\n", info.Name)
	fmt.Fprintf(stdout, "architecture %s: dim %d, hidden %d, layers %d, heads %d (kv %d), vocabulary %d, context %d\n",
		c.Arch, c.Dim, c.Hidden, c.Layers, c.Heads, c.KVHeads, c.Vocab, c.SeqLen)
	if onOwnEngine {
		smaller := smallerCaches(info.KVTypes[0], info.KVTypes[1], c.HeadSize())
		if smaller != "" {
			smaller = "; less with " + smaller
		}
		fmt.Fprintf(stdout, "KV cache: %s a position in %s, %s a session at the full context%s\n",
			words.Bytes(info.KVPerPosition), cacheTypes(info.KVTypes[0], info.KVTypes[1]), words.Bytes(info.KVContext), smaller)
	}
	fmt.Fprintf(stdout, "fingerprint %s\norigin %s\n", info.Fingerprint, info.Origin)
	return nil
}

// modelInfo is hlm inspect's report of a model spec.
type modelInfo struct {
	Name        string       `json:"name"`
	Config      model.Config `json:"config"`
	Fingerprint string       `json:"fingerprint"`
	Origin      string       `json:"origin"`
	// On hlm's engine: a session's KV cache per position and at the full
	// context, in bytes, and the types of its keys and values (ctk, ctv).
	KVPerPosition int64     `json:"kv_bytes_per_position,omitempty"`
	KVContext     int64     `json:"kv_bytes_full_context,omitempty"`
	KVTypes       [2]string `json:"kv_cache_types,omitzero"`
}

// ggufInfo is hlm inspect's report of a GGUF file.
type ggufInfo struct {
	File      string            `json:"file"`
	Bytes     int64             `json:"bytes"`
	Version   uint32            `json:"version"`
	Arch      string            `json:"architecture"`
	Origin    string            `json:"origin,omitempty"`
	Metadata  map[string]string `json:"metadata"`
	Types     []typeCount       `json:"tensor_types"`
	Tensors   []tensorLine      `json:"tensors,omitempty"`
	KeysOrder []string          `json:"-"` // the metadata's keys in file order
}

type typeCount struct {
	Type    string `json:"type"`
	Tensors int    `json:"tensors"`
	Bytes   uint64 `json:"bytes"`
}

type tensorLine struct {
	Name  string   `json:"name"`
	Type  string   `json:"type"`
	Dims  []uint64 `json:"dims"`
	Bytes uint64   `json:"bytes"`
}

func inspectGGUF(path string, list, asJSON bool, stdout io.Writer) error {
	f, err := gguf.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	info := ggufInfo{File: path, Bytes: f.Size, Version: f.Version, Arch: f.Architecture(), Metadata: map[string]string{}}
	if s, err := f.String(model.OriginKey); err == nil {
		info.Origin = s
	}
	for _, kv := range f.Metadata {
		info.Metadata[kv.Key] = fmt.Sprint(kv.Value)
		info.KeysOrder = append(info.KeysOrder, kv.Key)
	}
	byType := map[string]*typeCount{}
	for _, t := range f.Tensors {
		name := t.Type.String()
		tc := byType[name]
		if tc == nil {
			tc = &typeCount{Type: name}
			byType[name] = tc
		}
		tc.Tensors++
		tc.Bytes += t.NumBytes()
		if list {
			info.Tensors = append(info.Tensors, tensorLine{t.Name, name, t.Dims, t.NumBytes()})
		}
	}
	for _, tc := range byType {
		info.Types = append(info.Types, *tc)
	}
	slices.SortFunc(info.Types, func(a, b typeCount) int {
		switch {
		case a.Bytes > b.Bytes:
			return -1
		case a.Bytes < b.Bytes:
			return 1
		}
		return strings.Compare(a.Type, b.Type)
	})
	if asJSON {
		return writeJSON(stdout, info)
	}
	fmt.Fprintf(stdout, "file: %s (%d bytes, GGUF version %d)\n", path, info.Bytes, info.Version)
	fmt.Fprintf(stdout, "architecture: %s\n", info.Arch)
	if info.Origin != "" {
		fmt.Fprintf(stdout, "origin (%s): %s\n", model.OriginKey, info.Origin)
	}
	fmt.Fprintf(stdout, "metadata (%d keys):\n", len(info.KeysOrder))
	for _, k := range info.KeysOrder {
		fmt.Fprintf(stdout, "  %s = %s\n", k, info.Metadata[k])
	}
	fmt.Fprintf(stdout, "tensors (%d):\n", len(f.Tensors))
	for _, tc := range info.Types {
		fmt.Fprintf(stdout, "  %-6s %5d tensors %12d bytes\n", tc.Type, tc.Tensors, tc.Bytes)
	}
	for _, t := range info.Tensors {
		fmt.Fprintf(stdout, "  %s %s %v %d bytes\n", t.Name, t.Type, t.Dims, t.Bytes)
	}
	return nil
}

// writeJSON writes v as indented JSON.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
