package tokenizer

// GPT-2's byte-level alphabet (its bytes_to_unicode): every byte is spelled
// as one printable character, so that byte-level BPE pieces are readable
// strings. The printable bytes '!'..'~', '¡'..'¬' and '®'..'ÿ' stand for
// themselves; the other 68 bytes, in ascending order, become U+0100,
// U+0101, ... (a space is "Ġ" U+0120, a newline "Ċ" U+010A).
var (
	byteRune [256]rune      // byte → its character
	runeByte map[rune]uint8 // character → its byte
)

func init() {
	runeByte = make(map[rune]uint8, 256)
	n := rune(0)
	for b := 0; b < 256; b++ {
		r := rune(b)
		if !('!' <= b && b <= '~' || 0xA1 <= b && b <= 0xAC || 0xAE <= b && b <= 0xFF) {
			r = 256 + n
			n++
		}
		byteRune[b] = r
		runeByte[r] = uint8(b)
	}
}

// byteLevelBytes returns the bytes a byte-level piece spells, and false if
// some character of it is not in the alphabet (such a piece can only be
// an added token, whose text stands for itself).
func byteLevelBytes(piece string) (string, bool) {
	out := make([]byte, 0, len(piece))
	for _, r := range piece {
		b, ok := runeByte[r]
		if !ok {
			return "", false
		}
		out = append(out, b)
	}
	return string(out), true
}
