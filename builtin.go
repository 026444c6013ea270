// Package hlm holds the files the hlm binary ships with: the default LLM,
// stories260K (models/stories260K, MIT, from llama2.c's tinyllamas), and
// the drafts distilled with hlm (drafts/). Package model/builtin serves
// them as model specs (builtin:NAME); the commands live in cmd/hlm.
package hlm

import "embed"

// Files are the shipped models.
//
//go:embed models/stories260K/stories260K.bin models/stories260K/tok512.bin models/stories260K/LICENSE
//go:embed drafts/stories260K-draft.gguf drafts/tinystories656k-draft.gguf
var Files embed.FS
