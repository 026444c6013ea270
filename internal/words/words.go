// Package words writes counts in the sentences hlm prints: "1 session",
// "2 sessions"; "once", "twice", "3 times".
package words

import "fmt"

// Plural is n and noun, with an s after it unless n is 1: "1 session",
// "2 sessions".
func Plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// Times writes a count of repetitions: "once", "twice", "3 times".
func Times(n int) string {
	switch n {
	case 1:
		return "once"
	case 2:
		return "twice"
	}
	return fmt.Sprintf("%d times", n)
}
