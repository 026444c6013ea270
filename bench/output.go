package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// WriteMarkdown prints the results as llama-bench's Markdown table:
// | model | size | params | threads | test | t/s |, t/s as "mean ± sd".
func WriteMarkdown(w io.Writer, rs []Result) error {
	rows := [][]string{{"model", "size", "params", "threads", "test", "t/s"}}
	kernels := map[string]bool{}
	for _, r := range rs {
		kernels[r.Kernels] = true
	}
	for _, r := range rs {
		name := r.Model + " " + r.Type
		if len(kernels) > 1 { // comparing kernel levels: say which row is which
			name += " (" + r.Kernels + ")"
		}
		rows = append(rows, []string{
			name,
			sizeString(r.Size),
			paramString(r.Params),
			fmt.Sprint(r.Threads),
			r.Test,
			fmt.Sprintf("%.2f ± %.2f", r.AvgTS, r.StddevTS),
		})
	}
	width := make([]int, len(rows[0]))
	for _, row := range rows {
		for i, c := range row {
			width[i] = max(width[i], len([]rune(c)))
		}
	}
	var b strings.Builder
	line := func(row []string) {
		for i, c := range row {
			pad := strings.Repeat(" ", width[i]-len([]rune(c)))
			if i == 0 {
				fmt.Fprintf(&b, "| %s%s ", c, pad) // text left, numbers right
			} else {
				fmt.Fprintf(&b, "| %s%s ", pad, c)
			}
		}
		b.WriteString("|\n")
	}
	line(rows[0])
	for i, wd := range width {
		if i == 0 {
			fmt.Fprintf(&b, "| %s ", strings.Repeat("-", wd))
		} else {
			fmt.Fprintf(&b, "| %s: ", strings.Repeat("-", wd-1))
		}
	}
	b.WriteString("|\n")
	for _, row := range rows[1:] {
		line(row)
	}
	if len(kernels) == 1 {
		fmt.Fprintf(&b, "\nkernels: %s\n", rs[0].Kernels)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteJSON prints the results as one JSON array.
func WriteJSON(w io.Writer, rs []Result) error {
	if rs == nil {
		rs = []Result{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rs)
}

// sizeString is n bytes in MiB or GiB, as llama-bench prints sizes.
func sizeString(n int64) string {
	if n >= 1<<30 {
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	}
	return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20))
}

// paramString is a parameter count in K, M or B.
func paramString(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.2f B", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.2f M", float64(n)/1e6)
	}
	return fmt.Sprintf("%.2f K", float64(n)/1e3)
}
