package dataset

import (
	"errors"
	"strings"
	"testing"
)

// parsers are the JSON/JSONL parsers behind the loaders, by dataset name.
var parsers = map[string]func(data []byte, name string) ([]Example, error){
	"alpaca":      parseAlpaca,
	"alpaca-seed": parseAlpacaSeed,
	"alpaca-eval": parseAlpacaEval,
	"creak":       parseCREAK,
	"strategyqa":  parseStrategyQA,
	"qed":         parseQED,
}

func TestParseFormats(t *testing.T) {
	for _, tc := range []struct {
		set, in string
		want    []Example
	}{
		{"alpaca", `[{"instruction":"I","input":"","output":"O"}, {"instruction":"J","input":"x","output":""}]`,
			[]Example{{ID: "alpaca/0", Prompt: AlpacaPrompt("I", ""), Reference: "O"}, {ID: "alpaca/1", Prompt: AlpacaPrompt("J", "x")}}},
		{"alpaca", "{\"instruction\":\"I\",\"output\":\"O\",\"extra\":[1]}\n\n{\"instruction\":\"K\"}\n", // JSON lines
			[]Example{{ID: "alpaca/0", Prompt: AlpacaPrompt("I", ""), Reference: "O"}, {ID: "alpaca/1", Prompt: AlpacaPrompt("K", "")}}},
		{"alpaca-seed", `{"id":"s","instruction":"I","instances":[{"input":"a","output":"A"},{"input":"","output":"B"}]}`,
			[]Example{{ID: "alpaca-seed/s", Prompt: AlpacaPrompt("I", "a"), Reference: "A"}, {ID: "alpaca-seed/s#1", Prompt: AlpacaPrompt("I", ""), Reference: "B"}}},
		{"alpaca-eval", "\ufeff[{\"instruction\":\"I\",\"output\":\"O\"}]", // byte-order mark
			[]Example{{ID: "alpaca-eval/0", Prompt: "I", Reference: "O"}}},
		{"creak", `[{"ex_id":"e","sentence":" S. ","explanation":"E","label":"true"},{"sentence":"T","label":""}]`, // JSON array
			[]Example{{ID: "creak/e", Prompt: "Is the following sentence factually correct?\n\"S.\"\nExplain briefly, then answer yes or no.\nAnswer:", Reference: "E. So, the answer is yes.", Answer: "yes"},
				{ID: "creak/1", Prompt: "Is the following sentence factually correct?\n\"T\"\nExplain briefly, then answer yes or no.\nAnswer:"}}},
		{"strategyqa", `[{"qid":"q","question":"Q?","answer":true,"facts":["a  b", "", "c."]}]`,
			[]Example{{ID: "strategyqa/q", Prompt: "Question: Q?\nExplain briefly, then answer yes or no.\nAnswer:", Reference: "a b. c. So, the answer is yes.", Answer: "yes"}}},
		{"qed", `{"example_id":12,"question_text":"who","paragraph_text":"P","original_nq_answers":[[{"string":"x"},{"string":"y"}],[{"string":"z"}]],"annotation":{"explanation_type":"none"}}`,
			[]Example{{ID: "qed/12", Prompt: "Passage: P\nQuestion: who?\nExplain briefly using the passage, then answer.\nAnswer:", Reference: "The answer is x, y.", Answer: "x, y"}}},
		{"qed", `{"example_id":-1,"question_text":"who?","paragraph_text":"P","annotation":{"answer":[{"paragraph_reference":{"string":"A"}}],"selected_sentence":{"string":"A did it . "}}}`,
			[]Example{{ID: "qed/-1", Prompt: "Passage: P\nQuestion: who?\nExplain briefly using the passage, then answer.\nAnswer:", Reference: "A did it . So, the answer is A.", Answer: "A"}}},
	} {
		got, err := parsers[tc.set]([]byte(tc.in), "t")
		if err != nil {
			t.Errorf("%s %q: %v", tc.set, tc.in, err)
			continue
		}
		if len(got) != len(tc.want) {
			t.Errorf("%s %q: %d examples, want %d", tc.set, tc.in, len(got), len(tc.want))
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("%s %q: example %d\n got %+q\nwant %+q", tc.set, tc.in, i, got[i], tc.want[i])
			}
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		set, in string
		want    string // substring of the error
	}{
		{"alpaca", "", "t: malformed dataset: empty file"},
		{"alpaca", " \n ", "empty file"},
		{"alpaca", "[]", "no records"},
		{"alpaca", `[{"instruction":"a"}, {"input":"x"}]`, `t:1: record 1: malformed dataset: missing or empty "instruction"`},
		{"alpaca", "[\n{\"instruction\":\"a\"},\n{\"instruction\": 5}\n]", "t:3: record 1: malformed dataset: json: cannot unmarshal number"},
		{"alpaca", "[\n{\"instruction\":\"a\"},\n{\"instruction\":\"b\"", "t:3: record 1: malformed dataset: unexpected EOF"},
		{"alpaca", "[\n{\"instruction\":\"a\"},\n{\"instruction\" \"b\"}\n]", "t:3: record 1: malformed dataset: invalid character"},
		{"alpaca", `[{"instruction":"a"}] x`, "data after the closing ']'"},
		{"alpaca", `[{"instruction":"a"} {"instruction":"b"}]`, "record 1"},
		{"alpaca", `[{"instruction":"a"},]`, "record 1"},
		{"alpaca", `[{"instruction":"a"}`, "end of array"},
		{"alpaca", `[1]`, "record 0: malformed dataset: json: cannot unmarshal number"},
		{"alpaca", `[null]`, `record 0: malformed dataset: missing or empty "instruction"`},
		{"alpaca", `"just a string"`, "cannot unmarshal string"},
		{"alpaca-seed", `{"id":"s","instruction":"I","instances":[]}`, `no "instances"`},
		{"alpaca-seed", "{\"instruction\":\"I\",\"instances\":[{}]}\n{\"instruction\":\"\",\"instances\":[{}]}", "t:2: record 1"},
		{"alpaca-eval", `[{"output":"o"}]`, `missing or empty "instruction"`},
		{"creak", `{"sentence":"s","label":"maybe"}`, `"label" is "maybe"`},
		{"creak", "{\"sentence\":\"s\"}\n{\"sentence\":\"s\", \"label\": true}", "t:2: record 1: malformed dataset: json: cannot unmarshal bool"},
		{"creak", `{"label":"true"}`, `missing or empty "sentence"`},
		{"strategyqa", `[{"question":"q","answer":"yes"}]`, "cannot unmarshal string"},
		{"strategyqa", `[{"answer":true}]`, `missing or empty "question"`},
		{"qed", `{"question_text":"q"}`, `missing or empty "paragraph_text"`},
		{"qed", `{"paragraph_text":"p"}`, `missing or empty "question_text"`},
		{"qed", `{"example_id":"abc","question_text":"q","paragraph_text":"p"}`, "record 0"},
		{"qed", `{"question_text":"q","paragraph_text":"p","annotation":[]}`, "cannot unmarshal array"},
	} {
		_, err := parsers[tc.set]([]byte(tc.in), "t")
		if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, ErrMalformed) {
			t.Errorf("%s %q: error %v, want one containing %q and wrapping ErrMalformed", tc.set, tc.in, err, tc.want)
		}
	}
}

// fuzzParser checks that a parser never panics and that what it accepts is
// usable: every example has an ID and a non-blank prompt.
func fuzzParser(f *testing.F, set string, seeds ...string) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	for _, s := range []string{"", "[", "]", "{", "[{}]", "null", "[null]", "[[[[[[[[[[", `{"a":1}{"b":2}`, "\xff\xfe{", "[1e999]"} {
		f.Add([]byte(s))
	}
	parse := parsers[set]
	f.Fuzz(func(t *testing.T, data []byte) {
		ex, err := parse(data, "fuzz")
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v does not wrap ErrMalformed", err)
			}
			return
		}
		if len(ex) == 0 {
			t.Fatal("no examples and no error")
		}
		for _, e := range ex {
			if e.ID == "" || strings.TrimSpace(e.Prompt) == "" {
				t.Fatalf("unusable example %+q", e)
			}
		}
	})
}

func FuzzParseAlpaca(f *testing.F) {
	fuzzParser(f, "alpaca", `[{"instruction":"I","input":"x","output":"O"}]`, "{\"instruction\":\"I\"}\n{\"instruction\":\"J\"}")
}

func FuzzParseAlpacaSeed(f *testing.F) {
	fuzzParser(f, "alpaca-seed", `{"id":"s","instruction":"I","instances":[{"input":"a","output":"A"}]}`)
}

func FuzzParseAlpacaEval(f *testing.F) {
	fuzzParser(f, "alpaca-eval", `[{"dataset":"d","instruction":"I","output":"O","generator":"g"}]`)
}

func FuzzParseCREAK(f *testing.F) {
	fuzzParser(f, "creak", `{"ex_id":"e","sentence":"S","explanation":"E","label":"false"}`, `[{"sentence":"S","label":"true"}]`)
}

func FuzzParseStrategyQA(f *testing.F) {
	fuzzParser(f, "strategyqa", `[{"qid":"q","question":"Q","answer":false,"facts":["f"]}]`)
}

func FuzzParseQED(f *testing.F) {
	fuzzParser(f, "qed", `{"example_id":1,"question_text":"q","paragraph_text":"p","original_nq_answers":[[{"string":"a"}]],"annotation":{"answer":[{"paragraph_reference":{"string":"a"}}],"selected_sentence":{"string":"s"}}}`)
}
