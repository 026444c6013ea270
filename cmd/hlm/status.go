package main

import (
	"fmt"
	"io"
)

// statusLine reports a counter on w: on a terminal the line is redrawn in
// place; elsewhere (a log file, a pipe) it is printed as a line of its own
// at every tenth of the total and at the end, so that logs hold no carriage
// returns.
func statusLine(w io.Writer) func(done, total int, msg string) {
	if isTerminal(w) {
		return func(done, total int, msg string) {
			fmt.Fprintf(w, "\r%s   ", msg)
			if done == total {
				fmt.Fprintln(w)
			}
		}
	}
	last := -1
	return func(done, total int, msg string) {
		tenth := 10 * done / max(total, 1)
		if tenth == last && done != total {
			return
		}
		last = tenth
		fmt.Fprintln(w, msg)
	}
}
