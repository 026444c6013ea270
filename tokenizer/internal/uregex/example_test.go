package uregex_test

import (
	"fmt"

	"github.com/hlmproject/hlm/tokenizer/internal/uregex"
)

// The Llama-3 pre-tokenizer splits a text into words, numbers of up to
// three digits, punctuation and whitespace.
func ExampleRegexp_FindAll() {
	re := uregex.MustCompile(`(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`)
	text := "It'S 12345 ok!\n"
	matches, err := re.FindAll(text, nil)
	if err != nil {
		panic(err)
	}
	for _, m := range matches {
		fmt.Printf("%d-%d %q\n", m[0], m[1], text[m[0]:m[1]])
	}
	// Output:
	// 0-2 "It"
	// 2-4 "'S"
	// 4-5 " "
	// 5-8 "123"
	// 8-10 "45"
	// 10-13 " ok"
	// 13-15 "!\n"
}
