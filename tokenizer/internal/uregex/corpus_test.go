package uregex

import (
	"math/rand/v2"
	"strings"
)

// corpusTexts are hand-written texts covering what pre-tokenizers meet:
// English, code, numbers of all lengths, whitespace runs, contractions in
// all cases, accents and combining marks, CJK, Japanese and Korean, emoji
// with ZWJ sequences and skin tones, right-to-left scripts and
// mathematics.
var corpusTexts = []string{
	"",
	" ",
	"Hello world",
	"Hello, world! How are you today?",
	"The quick brown fox jumps over the lazy dog.",
	" leading space and trailing space ",
	"I'm sure you're right, it's what we'd've done; they'll see, I've won.",
	"IT'S YOU'RE WE'VE I'M SHE'LL HE'D DON'T",
	"It'S yOu'Re We'vE I'm she'Ll he'D",
	"'s 't 're 've 'm 'll 'd 'x '",
	"rock'n'roll o'clock 'quoted' \"double\" ''",
	"func main() {\n\tfmt.Println(\"hi\")\n}\n",
	"for (int i = 0; i < n; ++i) { sum += a[i] * b[i]; }",
	"def f(x):\n    return x**2 + 3*x - 1  # comment\n\n\n",
	"if err != nil {\r\n\t\treturn fmt.Errorf(\"x: %w\", err)\r\n\t}",
	"<html><body class=\"main\">&nbsp;</body></html>",
	"a_b-c.d/e\\f|g~h^i`j@k#l$m%n&o*p(q)r[s]t{u}v<w>x=y+z",
	"https://example.com/path?q=1&r=two#frag",
	"0 1 12 123 1234 12345 123456 1234567 12345678 123456789 1234567890",
	"3.14159 2,718 1e10 -42 +7 0x1F 1_000_000 $19.99 €5 50%",
	"12345678901234567890123456789",
	"٠١٢٣٤٥٦٧٨٩ ०१२३४५६७८९ ①②③ ½ ¾ ² ³ Ⅻ ⅷ",
	"    four spaces\tone tab\t\ttwo tabs",
	"line1\nline2\n\nline4\r\nline5\rline6\n",
	"  \n  \n\n   \t \n",
	"trailing spaces   ",
	"trailing newlines\n\n",
	"\u00a0nbsp\u00a0\u00a0x \u3000ideographic\u3000\u3000y\u2003em\u2028ls\u2029ps\u0085nel\u000bvt\u000cff",
	"zero\u200bwidth\u200cjoiners\u200d\ufeffbom",
	"café naïve résumé Ångström coöperate façade Œuvre",
	"cafe\u0301 nai\u0308ve e\u0301e\u0300e\u0302 a\u0323\u0302",
	"Straße STRASSE ǅungla ǈ ǋ ʰʲ ᵃ ﬁ ﬂ",
	"Ελληνικά κείμενα, Кириллица текст, Հայերեն",
	"中文文本测试，这是一个句子。你好世界！",
	"日本語のテキスト、ひらがなとカタカナ。東京タワー",
	"한국어 텍스트입니다. 안녕하세요!",
	"混合English和中文123テスト한국어",
	"emoji 😀😃 thumbs 👍🏽 family 👨‍👩‍👧‍👦 flag 🇫🇷🇩🇪 heart ❤️ rainbow 🏳️‍🌈",
	"👩🏾‍💻 coder, 🧑‍🤝‍🧑 people, ☝️ up",
	"עברית טקסט, שלום! العربية نص، مرحبا بالعالم ١٢٣",
	"हिन्दी पाठ, नमस्ते दुनिया। தமிழ் உரை",
	"ภาษาไทย สวัสดีครับ",
	"∀x∈ℝ: x²≥0, ∑ᵢ aᵢ ≠ ∞, √2 ≈ 1.414, α+β=γ, ∫₀¹ f(x)dx",
	"→ ← ↑ ↓ ⇒ ⇔ ★ ☆ ♠ ♥ © ® ™ § ¶ † ‡ • … ‰",
	"«quotes» „German“ “curly” ‘single’ 「括弧」 『二重』",
	"！＂＃＄％＆＇（）＊＋，－．／：；＜＝＞？＠ＡＢＣａｂｃ",
	"𠀀𠀁 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𝟘𝟙𝟚 𐐀𐐨",
	"a\u0300\u0301\u0302\u0303 \u0300start with mark",
	"x\r\n\r\n\r\ny",
	"\t\t\tx",
	"end with tab\t",
	"!!!???...,,,;;;:::",
	" !!! ??? ...\n",
	"hello!!!\n\n",
	"a1b2c3 1a2b3c A1B2",
	"<sentinel:12> IMGIMGABCDZ IMGIMGAAAAZ",
	"1,234,567.89 and 1234567 and 12",
	"/* comment */ // line\n/// doc\n#!/bin/sh",
}

// runeClasses are the pools random texts draw from: well-established
// blocks only, whose categories do not differ between Go's Unicode and a
// newer one in a JavaScript engine.
var runeClasses = [][]rng{
	{{'a', 'z'}, {'A', 'Z'}},
	{{'0', '9'}},
	{{'!', '/'}, {':', '@'}, {'[', '`'}, {'{', '~'}},
	{{' ', ' '}, {' ', ' '}, {'\t', '\t'}, {'\n', '\n'}, {'\r', '\r'}, {0x0B, 0x0C}},
	{{0xA0, 0xA0}, {0x85, 0x85}, {0x1680, 0x1680}, {0x2000, 0x200A}, {0x2028, 0x2029}, {0x202F, 0x202F}, {0x205F, 0x205F}, {0x3000, 0x3000}},
	{{0x200B, 0x200D}, {0xFEFF, 0xFEFF}, {0x2060, 0x2060}}, // format characters, not spaces
	{{0xC0, 0xFF}, {0xA1, 0xBF}, {0x100, 0x17E}},           // Latin-1, Latin Extended-A (without ſ)
	{{0x300, 0x36F}}, // combining marks
	{{0x391, 0x3A9}, {0x3B1, 0x3C9}, {0x410, 0x44F}, {0x531, 0x556}},
	{{0x5D0, 0x5EA}, {0x621, 0x64A}, {0x660, 0x669}, {0x64B, 0x652}},
	{{0x915, 0x939}, {0x93E, 0x94D}, {0x966, 0x96F}, {0xE01, 0xE30}, {0xE31, 0xE3A}},
	{{0x4E00, 0x9FA5}, {0x3041, 0x3096}, {0x30A1, 0x30FA}, {0xAC00, 0xD7A3}, {0x3001, 0x3003}, {0xFF01, 0xFF5E}},
	{{0x1F600, 0x1F64F}, {0x1F3FB, 0x1F3FF}, {0x200D, 0x200D}, {0xFE0F, 0xFE0F}, {0x2764, 0x2764}, {0x1F1E6, 0x1F1FF}},
	{{0x2200, 0x22FF}, {0x2070, 0x2070}, {0x2074, 0x2079}, {0x2150, 0x215F}, {0x2160, 0x217F}, {0x2460, 0x2473}, {0x2190, 0x21FF}},
	{{0x1C5, 0x1C5}, {0x1C8, 0x1C8}, {0x2B0, 0x2C1}, {0x1D2C, 0x1D6A}, {0xE000, 0xE0FF}},
	{{0x20000, 0x2A6D6}, {0x1D400, 0x1D4FF}, {0x10400, 0x1044F}},
}

// corpusAtoms are multi-character pieces random texts also draw from.
var corpusAtoms = []string{
	"'s", "'S", "'t", "'T", "'re", "'RE", "'Re", "'ve", "'VE", "'m", "'M", "'ll", "'LL", "'lL", "'d", "'D",
	"\r\n", "  ", "   ", "\n\n", " \n", "123", "4567", "e\u0301", "👨‍👩‍👧", "<sentinel:", "IMGIMG", "/",
}

// randomText draws a text of up to maxLen pieces from runeClasses and
// corpusAtoms.
func randomText(rnd *rand.Rand, maxLen int) string {
	var b strings.Builder
	n := rnd.IntN(maxLen + 1)
	// A text leans on a few classes, as real text does.
	favs := []int{rnd.IntN(len(runeClasses)), rnd.IntN(len(runeClasses)), 0, 3}
	for range n {
		if rnd.IntN(8) == 0 {
			b.WriteString(corpusAtoms[rnd.IntN(len(corpusAtoms))])
			continue
		}
		var cls []rng
		if rnd.IntN(4) == 0 {
			cls = runeClasses[rnd.IntN(len(runeClasses))]
		} else {
			cls = runeClasses[favs[rnd.IntN(len(favs))]]
		}
		r := cls[rnd.IntN(len(cls))]
		b.WriteRune(r.lo + rune(rnd.IntN(int(r.hi-r.lo)+1)))
	}
	return b.String()
}
