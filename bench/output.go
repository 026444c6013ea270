package bench

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
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
			r.Label(),
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

// csvColumns are WriteCSV's columns: the JSON names of Result's fields,
// in their order, as llama-bench's -o csv names its columns after its JSON
// fields.
var csvColumns = []string{"model_filename", "model_type", "model_size", "model_n_params", "kernels",
	"n_threads", "n_sessions", "n_prompt", "n_gen", "n_depth", "test", "samples_ns", "samples_ts", "avg_ts", "stddev_ts"}

// WriteCSV prints the results as CSV (llama-bench's -o csv): a header
// naming the columns as the JSON does, then one row per result; the
// repetitions' samples are joined with ';'.
func WriteCSV(w io.Writer, rs []Result) error {
	cw := csv.NewWriter(w)
	cw.Write(csvColumns)
	for _, r := range rs {
		ns := make([]string, len(r.SamplesNs))
		for i, v := range r.SamplesNs {
			ns[i] = strconv.FormatInt(v, 10)
		}
		ts := make([]string, len(r.SamplesTS))
		for i, v := range r.SamplesTS {
			ts[i] = strconv.FormatFloat(v, 'g', -1, 64)
		}
		cw.Write([]string{r.Model, r.Type, strconv.FormatInt(r.Size, 10), strconv.FormatInt(r.Params, 10), r.Kernels,
			strconv.Itoa(r.Threads), strconv.Itoa(r.Sessions), strconv.Itoa(r.Prompt), strconv.Itoa(r.Gen), strconv.Itoa(r.Depth), r.Test,
			strings.Join(ns, ";"), strings.Join(ts, ";"),
			strconv.FormatFloat(r.AvgTS, 'g', -1, 64), strconv.FormatFloat(r.StddevTS, 'g', -1, 64)})
	}
	cw.Flush()
	return cw.Error()
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
