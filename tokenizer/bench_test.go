package tokenizer

import (
	"testing"
)

// benchText is about 1 kB of story text with a little punctuation and
// non-ASCII, the size of a typical prompt.
const benchText = `Once upon a time, in a small village at the edge of a great forest, there lived a little girl named Lily. ` +
	`She loved to explore the woods behind her house, where the trees were tall and the air smelled of pine. ` +
	`One sunny morning, Lily found a shiny red ball hidden under a bush. "Whose ball is this?" she asked, looking around. ` +
	`A small brown dog ran out from behind a tree and wagged its tail. "Is this yours?" Lily said with a smile. ` +
	`The dog barked happily, so Lily threw the ball, and the dog ran after it as fast as it could. ` +
	`They played together all day long, until the sun began to set and the sky turned orange and pink. ` +
	`When it was time to go home, the dog followed Lily to her door. Her mom said, "He can stay with us, if he likes." ` +
	`Lily was so happy that she hugged the dog and named him Max. From that day on, Lily and Max were best friends, ` +
	`and every morning they went to the woods to play with the red ball. The end — café, naïve, 日本 🙂.`

// benchEncode reports µs per encode and tokens per second.
func benchEncode(b *testing.B, tok *Tokenizer) {
	b.SetBytes(int64(len(benchText)))
	n := 0
	b.ResetTimer()
	for b.Loop() {
		n = len(encode(tok, benchText, true, false))
	}
	per := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(per*1e6, "µs/encode")
	b.ReportMetric(float64(n)/per, "tokens/s")
	b.ReportMetric(float64(n), "tokens")
}

// BenchmarkEncode encodes a ~1 kB text with the 32,000-token Llama 2
// vocabulary (llama2.c tokenizer.bin).
func BenchmarkEncode(b *testing.B) {
	benchEncode(b, loadLlama2C(b, llama2Bin, 32000))
}

// BenchmarkEncodeVocab is BenchmarkEncode through the GGUF form.
func BenchmarkEncodeVocab(b *testing.B) {
	tok, err := FromVocab(loadLlama2C(b, llama2Bin, 32000).Vocab())
	if err != nil {
		b.Fatal(err)
	}
	benchEncode(b, tok)
}

// BenchmarkEncodeHF encodes the same text with the 2,048-token
// TinyStories tokenizer.json (rank-ordered BPE).
func BenchmarkEncodeHF(b *testing.B) {
	benchEncode(b, loadTinyStories(b))
}

// BenchmarkEncodeReference is the O(n²) llama2.c loop, for comparison.
func BenchmarkEncodeReference(b *testing.B) {
	tok := loadLlama2C(b, llama2Bin, 32000)
	for b.Loop() {
		refEncodeScores(tok, benchText)
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N)*1e6, "µs/encode")
}

// BenchmarkDecodeStream streams the ids of the text back, token by token.
func BenchmarkDecodeStream(b *testing.B) {
	tok := loadLlama2C(b, llama2Bin, 32000)
	ids := encode(tok, benchText, true, false)
	for b.Loop() {
		d := tok.NewStreamDecoder()
		for _, id := range ids {
			d.Push(id)
		}
		d.Flush()
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N*len(ids))*1e6, "µs/token")
}

// BenchmarkLoad parses the 32,000-token tokenizer.bin.
func BenchmarkLoad(b *testing.B) {
	for b.Loop() {
		loadLlama2C(b, llama2Bin, 32000)
	}
}
