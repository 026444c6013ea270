package tokenizer

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sync"
	"testing"
)

// TestFingerprintCached checks that the remembered fingerprint is the hash
// of the vocabulary, the same on every call and from concurrent callers.
func TestFingerprintCached(t *testing.T) {
	tok := loadLlama2C(t, tok512Bin, 512)
	b, err := json.Marshal(tok.Vocab())
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	want := hex.EncodeToString(sum[:])
	var wg sync.WaitGroup
	got := make([]string, 8)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i] = tok.Fingerprint()
		}()
	}
	wg.Wait()
	for i, g := range got {
		if g != want {
			t.Errorf("call %d: Fingerprint() = %s, want %s", i, g, want)
		}
	}
}
