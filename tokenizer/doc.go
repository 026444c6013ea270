// Package tokenizer turns text into the token ids of Llama-family models
// and back, in pure Go, matching the reference implementations id for id.
//
// # Sources
//
// A Tokenizer comes from one of three sources:
//
//   - A llama2.c tokenizer.bin (LoadLlama2C, ParseLlama2C): int32
//     max_token_length, then per token until the end of the file a float32
//     score, an int32 length and the piece bytes. SentencePiece's "▁" was
//     replaced by ' ' when the file was exported. Ids 0, 1, 2 are <unk>,
//     BOS, EOS; ids 3..258 are the byte tokens <0x00>..<0xFF>.
//   - A Hugging Face tokenizer.json whose model is BPE over SentencePiece
//     pieces (LoadHFJSON, ParseHFJSON, ParseHFJSONWithConfig): normalizer
//     Replace " " → "▁" (and usually Prepend "▁"), no pre-tokenizer,
//     decoder Replace "▁" → " ", ByteFallback, Fuse, Strip. Other models,
//     normalizers, pre-tokenizers and decoders are refused with
//     ErrUnsupported rather than tokenized wrongly.
//   - GGUF metadata (tokenizer.ggml.*) given as a Vocab (FromVocab); any
//     tokenizer can be turned back into one with Tokenizer.Vocab, and the
//     rebuilt tokenizer gives the same ids (Tokenizer.Vocab lists the few
//     tokenizer.json settings GGUF cannot carry).
//
// # Encoding by score (llama2.c, GGUF "llama" without merges)
//
// This is llama2.c's encode. Non-empty text gets a dummy-prefix space.
// The text is cut into code points the way llama2.c does it (a byte plus up
// to three continuation bytes, so even invalid UTF-8 is cut identically);
// each code point is looked up as a piece, its spaces spelled as the
// source's space (' ' for llama2.c, "▁" for GGUF), and a code point that is
// not a piece becomes its byte tokens (or UNK if some byte has none). Then,
// repeatedly, the adjacent pair whose concatenation is a piece with the
// highest score (above -1e10, as in llama2.c) is merged, the leftmost pair
// on ties, until no pair merges. Unknown, control, unused and byte pieces
// are never looked up, as in SentencePiece.
//
// # Encoding by rank (Hugging Face BPE, GGUF "llama" with merges)
//
// This is the tokenizers library's BPE model. The text is normalized
// (spaces become "▁", and "▁" is prepended to non-empty text) and, with no
// pre-tokenizer, forms a single word, so merges cross word boundaries. Each
// character that is a piece becomes its id; otherwise, with byte_fallback,
// its UTF-8 bytes as <0xHH> tokens if all of them exist; otherwise <unk>,
// consecutive unknown characters fused into one with fuse_unk. (As in
// tokenizers, byte tokens do not end a run of unknown characters: the
// pending <unk> is emitted after them.) Then the pair with the lowest merge
// rank is merged, the leftmost on ties, until none is left.
//
// Both merge loops keep the symbols in a linked list and the candidate
// pairs in a priority queue, so encoding is O(n log n) in the text length;
// the tests check them against plain O(n²) re-implementations of the
// reference loops.
//
// # Decoding
//
// A byte piece <0xHH> decodes to its raw byte, "▁" to a space, a control
// token (BOS, EOS, other special tokens) to nothing, an id out of range to
// U+FFFD; bytes that do not form valid UTF-8 each become U+FFFD. The space
// of the dummy prefix is removed as the source's decoder does: for
// score-merging tokenizers the leading space of the piece right after BOS
// (llama2.c, SentencePiece); for Hugging Face BPE the leading space of the
// whole text (its Strip decoder). StreamDecoder does the same token by
// token without ever emitting half a UTF-8 character.
//
// # Errors
//
// Constructors return errors wrapping ErrFormat (malformed or hostile
// input: truncation, lengths beyond the data, ids out of range, duplicate
// pieces, merges naming missing pieces), ErrUnsupported (a configuration
// this package does not implement) or ErrVocabSize (a llama2.c file whose
// size differs from the one required). Every length read from input is
// bounded by the input, so hostile files cannot make a constructor allocate
// much more than their own size. Encode and Decode never fail.
//
// # Not handled
//
// Special and added tokens written literally in the text ("<s>",
// "<|start_story|>") are tokenized as plain text, never split out as their
// ids. llama2.c stops at a NUL byte in the text (a C string); this package
// encodes it like any other byte. For a llama2.c tokenizer, U+2581 "▁" in
// the text is an ordinary character (its pieces use ' '), whereas after
// Vocab and FromVocab, as in SentencePiece, it is the same as a space: only
// texts containing U+2581 encode differently after that round trip.
// llama2.c's merge loop would also produce <unk>, BOS, EOS or a byte token
// if two pieces happened to concatenate to one; no shipped vocabulary
// allows it, and this package, like SentencePiece, never does.
package tokenizer
