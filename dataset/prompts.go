package dataset

import (
	"bufio"
	"fmt"
	"os"
	"strings"
)

// LoadPromptFile reads a plain prompts file: one prompt per line; blank
// lines and lines starting with '#' are skipped; a literal "\n" in a line
// stands for a newline.
func LoadPromptFile(path string) ([]Example, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Example
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<16), 1<<24)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		out = append(out, Example{ID: fmt.Sprintf("%s:%d", path, n), Prompt: strings.ReplaceAll(line, `\n`, "\n")})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no prompts", path)
	}
	return out, nil
}
