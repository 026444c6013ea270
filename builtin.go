// Package hlm holds the files the hlm binary ships with: the default LLM,
// stories260K (models/stories260K, MIT, from llama2.c's tinyllamas), the
// drafts distilled with hlm (drafts/) and a small prompt set, 24 short
// stories written for hlm (data/stories, CC0). Package model/builtin
// serves the models as model specs (builtin:NAME), package dataset the
// prompt set; the commands live in cmd/hlm.
package hlm

import "embed"

// Files are the shipped models and prompt set.
//
//go:embed models/stories260K/stories260K.bin models/stories260K/tok512.bin models/stories260K/LICENSE
//go:embed drafts/stories260K-draft.gguf drafts/tinystories656k-draft.gguf
//go:embed data/stories/stories.txt
var Files embed.FS
