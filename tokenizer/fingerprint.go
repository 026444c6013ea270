package tokenizer

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
)

// Fingerprint identifies the tokenizer: a SHA-256 of its vocabulary in GGUF
// form (pieces, scores, types, merges, special ids and flags). Device and
// server compare fingerprints so that a pair with different tokenizers is
// refused rather than exchanging meaningless token ids.
func (t *Tokenizer) Fingerprint() string {
	b, _ := json.Marshal(t.Vocab())
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
