package report

import (
	"bytes"
	"encoding/csv"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
)

func TestMarkdown(t *testing.T) {
	for _, tc := range []struct {
		name string
		t    Table
		want string
	}{
		{"empty", Table{}, ""},
		{"aligned, numbers right", Table{
			Title:   "Cosine similarity",
			Columns: []string{"method", "Alpaca", "TR"},
			Rows: [][]string{
				{"HLM", "0.8531 ± 0.0120", "100.0%"},
				{"U-HLM", "0.85", "45.9%"},
				{"SLM", "–", "0.0%"},
			},
		}, "**Cosine similarity**\n\n" +
			"| method |          Alpaca |     TR |\n" +
			"| ------ | --------------: | -----: |\n" +
			"| HLM    | 0.8531 ± 0.0120 | 100.0% |\n" +
			"| U-HLM  |            0.85 |  45.9% |\n" +
			"| SLM    |               – |   0.0% |\n"},
		{"escapes, short and long rows", Table{
			Columns: []string{"a|b", "c"},
			Rows:    [][]string{{"x\ny"}, {`p\q`, "1", "extra"}},
		}, "| a\\|b |   c |       |\n" +
			"| ---- | --: | ----- |\n" +
			"| x y  |     |       |\n" +
			"| p\\\\q |   1 | extra |\n"},
	} {
		if got := tc.t.Markdown(); got != tc.want {
			t.Errorf("%s:\n got:\n%s\nwant:\n%s", tc.name, got, tc.want)
		}
	}
}

func TestCSVAndSave(t *testing.T) {
	tb := Table{Title: "T", Columns: []string{"name", "value"}, Rows: [][]string{{"a,b", `say "hi"`}, {"c"}}}
	var buf bytes.Buffer
	if err := tb.WriteCSV(&buf); err != nil {
		t.Fatal(err)
	}
	if got, want := buf.String(), "name,value\n\"a,b\",\"say \"\"hi\"\"\"\nc,\n"; got != want {
		t.Errorf("CSV = %q, want %q", got, want)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil || len(recs) != 3 || !slices.Equal(recs[1], []string{"a,b", `say "hi"`}) {
		t.Errorf("CSV does not read back: %q, %v", recs, err)
	}
	base := filepath.Join(t.TempDir(), "t")
	if err := tb.Save(base); err != nil {
		t.Fatal(err)
	}
	md, err1 := os.ReadFile(base + ".md")
	cs, err2 := os.ReadFile(base + ".csv")
	if err1 != nil || err2 != nil || string(md) != tb.Markdown() || !bytes.Equal(cs, []byte("name,value\n\"a,b\",\"say \"\"hi\"\"\"\nc,\n")) {
		t.Errorf("Save wrote %q, %q (%v, %v)", md, cs, err1, err2)
	}
	if err := tb.Save(filepath.Join(t.TempDir(), "missing-dir", "t")); err == nil {
		t.Error("Save into a missing directory: no error")
	}
}

func TestFormat(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{Float(0.85312, 4), "0.8531"},
		{Float(2, 2), "2.00"},
		{Float(-0.00001, 3), "0.000"},
		{Float(-1.5, 1), "-1.5"},
		{Float(1234567.891, 1), "1234567.9"},
		{Float(math.NaN(), 2), "–"},
		{Float(math.Inf(1), 2), "inf"},
		{Float(math.Inf(-1), 2), "-inf"},
		{PlusMinus(0.8531, 0.01204, 3), "0.853 ± 0.012"},
		{PlusMinus(0.8531, math.NaN(), 3), "0.853"},
		{Percent(0.4593, 1), "45.9%"},
		{Percent(math.NaN(), 1), "–"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

func TestCSVNumbers(t *testing.T) {
	tb := Table{
		Columns: []string{"method", "cosine", "rate", "saving (%)", "ratio", "mixed", "note"},
		Rows: [][]string{
			{"a", PlusMinus(0.853, 0.012, 3), Percent(0.459, 1), PlusMinus(12.5, 1.25, 1), Float(1.25, 2), "3%", "1.1× [1.0, 1.2]"},
			{"b", Float(0.8, 3), Percent(math.NaN(), 1), Float(math.NaN(), 1), "", "4", "x"},
		},
	}
	var buf bytes.Buffer
	if err := tb.WriteCSV(&buf); err != nil {
		t.Fatal(err)
	}
	want := "method,cosine,cosine_pm,rate (%),saving (%),saving (%)_pm,ratio,mixed,note\n" +
		"a,0.853,0.012,45.9,12.5,1.2,1.25,3%,\"1.1× [1.0, 1.2]\"\n" +
		"b,0.800,,,,,,4,x\n"
	if got := buf.String(); got != want {
		t.Errorf("CSV:\n got %q\nwant %q", got, want)
	}
	tb.HalfWidth = "_ci95"
	buf.Reset()
	if err := tb.WriteCSV(&buf); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil || len(recs) != 3 || recs[0][2] != "cosine_ci95" {
		t.Fatalf("with HalfWidth: %q, %v", recs, err)
	}
	for _, r := range recs[1:] {
		for c, s := range r[1:7] {
			if _, err := strconv.ParseFloat(s, 64); s != "" && err != nil {
				t.Errorf("numeric column %q holds %q", recs[0][c+1], s)
			}
		}
	}
}

// TestCSVPapersNumbers: the papers' rows, quoted as the papers print them
// ("5,134", "−0.06"), are numbers in CSV too, so that their columns stay
// numeric; a list ("5, 7") and a bound ("< 4e-3") stay text.
func TestCSVPapersNumbers(t *testing.T) {
	tb := Table{
		Columns: []string{"", "tokens", "b", "halves", "bound"},
		Rows: [][]string{
			{"ours", "18,432", Float(-0.026, 3), "36, 38", "1.2e-3"},
			{"paper", "5,134", "−0.06", "–", "< 4e-3"},
			{"big", "1,234,567.5", "−1e−3", "1, 2", "–"},
		},
	}
	var buf bytes.Buffer
	if err := tb.WriteCSV(&buf); err != nil {
		t.Fatal(err)
	}
	want := ",tokens,b,halves,bound\n" +
		"ours,18432,-0.026,\"36, 38\",1.2e-3\n" +
		"paper,5134,-0.06,–,< 4e-3\n" +
		"big,1234567.5,-1e-3,\"1, 2\",–\n"
	if got := buf.String(); got != want {
		t.Errorf("CSV:\n got %q\nwant %q", got, want)
	}
}
