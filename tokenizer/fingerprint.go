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
//
// The tokenizer is immutable, so the hash is computed on the first call and
// remembered.
func (t *Tokenizer) Fingerprint() string {
	t.fpOnce.Do(func() {
		b, _ := json.Marshal(t.Vocab())
		sum := sha256.Sum256(b)
		t.fp = hex.EncodeToString(sum[:])
	})
	return t.fp
}
