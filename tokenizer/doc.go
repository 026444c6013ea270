// Package tokenizer turns text into the token ids of language models and
// back, in pure Go, matching the reference implementations id for id:
// llama.cpp for GGUF vocabularies, Hugging Face's tokenizers for
// tokenizer.json files, llama2.c for its tokenizer.bin.
//
// # Sources
//
//   - A llama2.c tokenizer.bin (LoadLlama2C, ParseLlama2C): SentencePiece
//     pieces with scores, ' ' for space; ids 0, 1, 2 are <unk>, BOS, EOS;
//     ids 3..258 the byte tokens <0x00>..<0xFF>.
//   - A Hugging Face tokenizer.json whose model is BPE (LoadHFJSON,
//     ParseHFJSONWithConfig), with tokenizer_config.json, chat_template.jinja
//     and generation_config.json beside it: both the byte-level BPE of GPT-2,
//     Llama-3, Qwen, DeepSeek, SmolLM, Mistral (tekken) and the
//     SentencePiece-style BPE with byte fallback of Llama-2, Gemma and
//     TinyStories.
//   - A GPT-2 style directory, vocab.json + merges.txt (LoadGPT2, ParseGPT2):
//     GPT-2, GPT-Neo, OPT.
//   - GGUF metadata (tokenizer.ggml.*) given as a Vocab (FromVocab), with
//     tokenizer.ggml.model "llama" (SentencePiece), "gpt2" (byte-level BPE
//     after the pre-tokenizer tokenizer.ggml.pre names) or "gemma4".
//     Tokenizer.Vocab turns any tokenizer back into one.
//
// Load picks the reader from a path; model/llama reads GGUF files.
//
// # Encoding
//
// Encode runs one pipeline whose stages are data:
//
//  1. Added tokens are cut out of the text, the leftmost match first and
//     the longest there (Hugging Face's AddedVocabulary; llama.cpp's
//     special-token partition): control tokens ("<s>", "<|im_start|>")
//     only when special tokens are parsed (the default; see
//     EncodeOptions), user-defined ones always; lstrip, rstrip and
//     single_word as tokenizer.json says (and llama.cpp's Phi-3 rule for
//     GGUF).
//  2. Each remaining fragment is normalized (NFC, NFD, NFKC, NFKD, Replace
//     of a string, Prepend; a GGUF vocabulary has no normalizer, only
//     SentencePiece's space escaping and dummy prefix).
//  3. The pre-tokenizer splits it into words: Split steps of Oniguruma
//     regular expressions (package tokenizer/internal/uregex, a backtracking
//     engine for exactly these patterns: Unicode categories, lookahead,
//     case-insensitive groups) with every Split behavior, ByteLevel (with
//     GPT-2's own split when use_regex), Digits and Metaspace. A GGUF
//     tokenizer.ggml.pre names a list of patterns (see presets.go: the
//     originals of the models' tokenizer.json files, and the flags llama.cpp
//     sets for each name); a name hlm does not know is refused.
//  4. The model turns each word into ids. By score (llama2.c,
//     SentencePiece): code points looked up as pieces, else spelled with
//     byte tokens, then the adjacent pair whose concatenation has the
//     highest score merged first. By rank (BPE): the word's characters (or,
//     byte-level, its bytes, each the token of its character in GPT-2's
//     byte-to-unicode alphabet), unknown characters as byte-fallback tokens
//     or <unk>, then the pair of lowest merge rank merged first, the
//     leftmost among equals; ignore_merges takes a whole word that is a
//     token as is. Both merge loops keep the symbols in a linked list and
//     the candidate pairs in a priority queue (O(n log n)); a word's ids are
//     remembered for the rest of the call.
//
// Finally BOS and EOS are added when the caller asks and the tokenizer's
// configuration says so (GGUF add_bos_token with llama.cpp's defaults per
// model and pre-tokenizer; tokenizer.json's post-processor and
// tokenizer_config.json's add_bos_token).
//
// Byte-level BPE encodes any bytes, valid UTF-8 or not: the regex engine
// reads an invalid byte as U+FFFD (a symbol), and the model encodes the
// byte itself. Hugging Face cannot take such text at all; llama.cpp
// agrees on valid UTF-8.
//
// # End of generation, chat templates
//
// EOG lists the ids that end a generation: EOS, the GGUF end-of-turn and
// end-of-message ids, generation_config.json's eos_token_id, and the
// end-of-turn tokens llama.cpp recognises by name ("<|eot_id|>",
// "<|im_end|>", "<end_of_turn>", ...; in a tokenizer.json only special
// tokens). ChatTemplate is the model's Jinja chat template (package chat
// renders it).
//
// # Decoding
//
// A byte token (<0xHH>) decodes to its raw byte, a byte-level piece to the
// bytes it spells, "▁" to a space, a control token to nothing, an id out of
// range to U+FFFD; bytes that do not form valid UTF-8 each become U+FFFD.
// The space of a dummy prefix is removed as the source's decoder does.
// StreamDecoder does the same token by token without ever emitting half a
// UTF-8 character.
//
// # Errors
//
// Constructors return errors wrapping ErrFormat (malformed or hostile
// input: truncation, lengths beyond the data, ids out of range, duplicate
// pieces, merges naming missing pieces), ErrUnsupported (a configuration
// this package does not implement: a model, normalizer, pre-tokenizer or
// decoder type, a GGUF pre-tokenizer name, a regex construct — named in the
// message) or ErrVocabSize. Every length read from input is bounded by the
// input. Encode and Decode never fail; a pre-tokenizer regex that
// backtracks past Oniguruma's retry limit (only a hostile pattern can)
// leaves the rest of its word unsplit.
//
// # Checked against
//
// llama.cpp's own tokenizer tests (models/ggml-vocab-*.gguf with their .inp
// and .out, made by Hugging Face's tokenizers), Hugging Face's JavaScript
// tokenizers (@huggingface/tokenizers, @lenml/tokenizers) on the real
// tokenizer.json files of Llama-3, Qwen3, Gemma-3 and DeepSeek-V3 over a
// corpus and random text, llama2.c's encoder, and slow re-implementations
// of both merge loops (see the tests; internal/refs/fetch.sh fetches the
// references).
//
// # Not handled
//
// Unigram, WordPiece and WordLevel models; Lowercase, Strip, BERT and
// precompiled normalizers; the BERT, Whitespace and Punctuation
// pre-tokenizers (all refused with ErrUnsupported). Characters assigned in
// Unicode versions newer than Go's tables (Unicode 15.0) may fall in other
// categories than in the reference. llama2.c stops at a NUL byte in the
// text (a C string); this package encodes it like any other byte. A GGUF
// form cannot carry a tokenizer.json's Unicode normalizer (llama.cpp
// applies none), so Qwen's NFC is lost there, as in llama.cpp.
package tokenizer
