package tokenizer

import "slices"

// eogNames are the pieces that end a generation, as llama.cpp lists them
// (llama_vocab::impl::load): the end-of-turn and end-of-text tokens of the
// chat formats in use.
var eogNames = []string{
	"<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>",
	"<end_of_turn>", "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]",
	"<|end_of_text|>", "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>",
	"<｜end▁of▁sentence｜>", "[e~[",
	// fill-in-the-middle pad, repository and file separators
	"<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]",
	"<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>",
	"<|file_sep|>",
}

// findEOG returns the ids that end a generation, ascending: EOS, EOT, EOM,
// extra (e.g. generation_config.json's eos_token_id list), and the tokens
// named in eogNames (any token of a GGUF vocabulary, as llama.cpp does;
// only special tokens of a tokenizer.json, where a name like "</s>" may be
// ordinary text), with llama.cpp's two exceptions: "<|end|>" is not an
// end when "<|return|>" and "<|call|>" (or "<|calls|>" and "<|flush|>")
// exist, and "</s>" is not when "<|tool_response>" does.
func (t *Tokenizer) findEOG(extra []int) []int {
	set := map[int]bool{}
	for _, id := range append([]int{t.eos, t.eot, t.eom}, extra...) {
		if id >= 0 && id < len(t.pieces) {
			set[id] = true
		}
	}
	byName := map[string]int{}
	for id, p := range t.pieces {
		if t.src == fromHFJSON && t.types[id] != TypeControl {
			continue
		}
		if slices.Contains(eogNames, p) {
			set[id] = true
			if _, ok := byName[p]; !ok {
				byName[p] = id
			}
		}
	}
	has := func(p string) bool { _, ok := byName[p]; return ok }
	if end, ok := byName["<|end|>"]; ok && (has("<|return|>") && has("<|call|>") || has("<|calls|>") && has("<|flush|>")) {
		delete(set, end)
	}
	if s, ok := byName["</s>"]; ok && has("<|tool_response>") {
		delete(set, s)
	}
	out := make([]int, 0, len(set))
	for id := range set {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}
