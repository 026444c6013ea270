package uregex

import "testing"

// TestPreTokenizerPatterns pins hand-checked splits of the real patterns
// (as "start:match" items) on texts that exercise their branches.
func TestPreTokenizerPatterns(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       []string
	}{
		// GPT-2: case-sensitive contractions; a run of spaces gives all
		// but its last space to \s+(?!\S).
		{"gpt2-bytelevel", "Hello world, it's  2024!\n", []string{"0:Hello", "5: world", "11:,", "12: it", "15:'s", "17: ", "18: 2024", "23:!", "24:\n"}},
		{"gpt2-bytelevel", "I'M", []string{"0:I", "1:'", "2:M"}},
		{"gpt2-bytelevel", "a  ", []string{"0:a", "1:  "}},
		{"gpt2", "a  b", []string{"0:a", "1: ", "2: b"}},
		// Llama-3: case-insensitive contractions (ſ folds to s, as in
		// Oniguruma), numbers of up to three digits, newlines.
		{"llama3", "Hello world, it's  2024!\n", []string{"0:Hello", "5: world", "11:,", "12: it", "15:'s", "17: ", "18: ", "19:202", "22:4", "23:!\n"}},
		{"llama3", "I'M x'ſx", []string{"0:I", "1:'M", "3: x", "5:'ſ", "8:x"}},
		{"llama3", "a\n\n  b", []string{"0:a", "1:\n\n", "3: ", "4: b"}},
		{"llama3", "cafe\u0301 x", []string{"0:cafe", "4:\u0301", "6: x"}},
		{"llama3-llamacpp", "I'M x'ſx", []string{"0:I", "1:'M", "3: x", "5:'ſx"}}, // the adaptation folds ASCII only
		// Qwen2: single digits; Qwen3.5: marks join letters.
		{"qwen2", "x2024", []string{"0:x", "1:2", "2:0", "3:2", "4:4"}},
		{"qwen35", "cafe\u0301 x", []string{"0:cafe\u0301", "6: x"}},
		// DeepSeek-V3: digits, kana and ideographs, then punctuation that
		// starts an ASCII word.
		{"deepseek3_llm-1", "1234567", []string{"0:123", "3:456", "6:7"}},
		{"deepseek3_llm-2", "日本語のテキストabc", []string{"0:日本語のテキスト"}},
		{"deepseek3_llm-3", ".Println(x) 'quoted' $var", []string{"0:.Println", "8:(x", "10:)", "11: '", "13:quoted", "19:'", "20: $", "22:var"}},
		// tekken: words split at case changes.
		{"tekken", "HelloWorld XMLHttp iPhone", []string{"0:Hello", "5:World", "10: XMLHttp", "18: i", "20:Phone"}},
		{"tekken", "HELLO world", []string{"0:HELLO", "5: world"}},
		// GPT-4o: contractions stay with their word; numbers by three;
		// punctuation takes the newlines and slashes after it.
		{"gpt4o", "I'm HAPPY, don't", []string{"0:I'm", "3: HAPPY", "9:,", "10: don't"}},
		{"gpt4o", "12345 a/b x.//\ny", []string{"0:123", "3:45", "5: a", "7:/b", "9: x", "11:.//\n", "15:y"}},
		// Bailing-MoE: possessive quantifiers, one newline per match.
		{"bailingmoe", "it's 12 ok\n\n", []string{"0:it", "2:'s", "4: ", "5:1", "6:2", "7: ok", "10:\n\n"}},
		// SuperBPE and tiny_aya: digits grouped by three from the right,
		// by empty matches and by a lookahead.
		{"superbpe-2", "1234567", []string{"1:", "4:"}},
		{"superbpe-2", "12345 678", []string{"2:", "6:"}},
		{"tiny_aya-1", "1234567 89", []string{"0:1", "1:234", "4:567", "8:89"}},
		// JAIS-2: runs of spaces in power-of-two pieces.
		{"jais2", "a          b", []string{"0:a", "1:        ", "9: ", "10: b"}},
		// Kimi-K2: Han runs apart from other letters (class intersection).
		{"kimi_k2-tiktoken", "中文abc中", []string{"0:中文", "6:abc", "9:中"}},
		// DeepSeek-LLM: a literal letter class; poro: a class that looks
		// like a group.
		{"deepseek_llm-2", "Hello wörld Ω", []string{"0:Hello", "5: wörld", "12: Ω"}},
		{"deepseek_llm-4", "a  \nb  ", []string{"1:  ", "5:  "}},
		{"poro", "Hi, there (x|y)!", []string{"0:Hi", "3: there", "11:x", "13:y"}},
		// Chameleon: groups and counted alternation.
		{"chameleon-2", "IMGIMGABCDZ IMGIMGABCDEZ", []string{"0:IMGIMGABCDZ"}},
		// EXAONE-MoE: words joined by single spaces.
		{"exaone_moe", "Hello big world. Ok", []string{"0:Hello big world", "15:.", "16: Ok"}},
	} {
		runMatchCases(t, []matchCase{{patternByName(tc.name), tc.text, tc.want}})
	}
}
