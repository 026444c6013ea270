package dataset

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// The FLAN-collection QA sets (CREAK, StrategyQA, QED) are turned into
// prompt/response pairs in the spirit of FLAN's chain-of-thought templates:
// the prompt asks for a short explanation and then the answer, and the
// reference is the set's own explanation followed by the answer,
//
//	{explanation} So, the answer is {answer}.
//
// ("The answer is {answer}." when the record has no explanation). Records
// without a gold answer (CREAK's test split) get an empty Reference and
// Answer; quality metrics skip them.

const (
	creakPrompt      = "Is the following sentence factually correct?\n\"%s\"\nExplain briefly, then answer yes or no.\nAnswer:"
	strategyQAPrompt = "Question: %s\nExplain briefly, then answer yes or no.\nAnswer:"
	qedPrompt        = "Passage: %s\nQuestion: %s\nExplain briefly using the passage, then answer.\nAnswer:"
)

// cotReference is "{reasoning} So, the answer is {answer}.", with a full
// stop added to reasoning when it has no final punctuation; "" when answer
// is "".
func cotReference(reasoning, answer string) string {
	if answer == "" {
		return ""
	}
	if reasoning = sentence(reasoning); reasoning == "" {
		return "The answer is " + answer + "."
	}
	return reasoning + " So, the answer is " + answer + "."
}

// sentence trims s and ends it with a full stop unless it already ends with
// '.', '!' or '?' ("" stays "").
func sentence(s string) string {
	s = strings.TrimSpace(s)
	if s != "" && !strings.ContainsAny(s[len(s)-1:], ".!?") {
		s += "."
	}
	return s
}

// yesNo maps a truth value to FLAN's answer words.
func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// creakRecord is one line of CREAK's {train,dev,contrast_set,
// test_without_labels}.json (JSON lines, despite the extension).
type creakRecord struct {
	ExID        string `json:"ex_id"`
	Sentence    string `json:"sentence"`
	Explanation string `json:"explanation"`
	Label       string `json:"label"`
}

// LoadCREAK reads CREAK claims (JSON lines or a JSON array of {ex_id,
// sentence, explanation, label, entity, ...}). Fields used:
//
//	Prompt    = Is the following sentence factually correct?\n"{sentence}"\nExplain briefly, then answer yes or no.\nAnswer:
//	Answer    = "yes" for label "true", "no" for "false" ("" when there is no label)
//	Reference = {explanation} So, the answer is {Answer}.
//
// An explanation of "n/a" (the contrast set) counts as none. IDs are
// "creak/<ex_id>".
func LoadCREAK(path string) ([]Example, error) {
	b, err := readFile(path)
	if err != nil {
		return nil, err
	}
	return parseCREAK(b, path)
}

func parseCREAK(data []byte, name string) ([]Example, error) {
	var out []Example
	err := decodeRecords(data, name, func(i int, r *creakRecord) error {
		if strings.TrimSpace(r.Sentence) == "" {
			return errors.New(`missing or empty "sentence"`)
		}
		var answer string
		switch r.Label {
		case "true":
			answer = "yes"
		case "false":
			answer = "no"
		case "":
		default:
			return fmt.Errorf(`"label" is %q, want "true" or "false"`, r.Label)
		}
		expl := r.Explanation
		if strings.EqualFold(strings.TrimSpace(expl), "n/a") {
			expl = ""
		}
		out = append(out, Example{
			ID:        "creak/" + idOr(r.ExID, i),
			Prompt:    fmt.Sprintf(creakPrompt, strings.TrimSpace(r.Sentence)),
			Reference: cotReference(expl, answer),
			Answer:    answer,
		})
		return nil
	})
	return nonEmpty(out, name, err)
}

// strategyQARecord is one element of StrategyQA's {train,dev}.json (a JSON
// array).
type strategyQARecord struct {
	QID      string   `json:"qid"`
	Question string   `json:"question"`
	Answer   *bool    `json:"answer"`
	Facts    []string `json:"facts"`
}

// LoadStrategyQA reads StrategyQA questions (a JSON array or JSON lines of
// {qid, term, description, question, answer, facts, decomposition,
// evidence}). Fields used:
//
//	Prompt    = Question: {question}\nExplain briefly, then answer yes or no.\nAnswer:
//	Answer    = "yes" / "no" from the boolean answer ("" when absent)
//	Reference = {facts, each ended with a full stop, joined by " "} So, the answer is {Answer}.
//
// (FLAN's cot_strategyqa rationale is the joined facts.) IDs are
// "strategyqa/<qid>".
func LoadStrategyQA(path string) ([]Example, error) {
	b, err := readFile(path)
	if err != nil {
		return nil, err
	}
	return parseStrategyQA(b, path)
}

func parseStrategyQA(data []byte, name string) ([]Example, error) {
	var out []Example
	err := decodeRecords(data, name, func(i int, r *strategyQARecord) error {
		if strings.TrimSpace(r.Question) == "" {
			return errors.New(`missing or empty "question"`)
		}
		var answer string
		if r.Answer != nil {
			answer = yesNo(*r.Answer)
		}
		facts := make([]string, 0, len(r.Facts))
		for _, f := range r.Facts {
			if f = sentence(strings.Join(strings.Fields(f), " ")); f != "" {
				facts = append(facts, f)
			}
		}
		out = append(out, Example{
			ID:        "strategyqa/" + idOr(r.QID, i),
			Prompt:    fmt.Sprintf(strategyQAPrompt, strings.TrimSpace(r.Question)),
			Reference: cotReference(strings.Join(facts, " "), answer),
			Answer:    answer,
		})
		return nil
	})
	return nonEmpty(out, name, err)
}

// qedSpan is a text span of a QED annotation.
type qedSpan struct {
	String string `json:"string"`
}

// qedRecord is one line of qed-{train,dev}.jsonlines.
type qedRecord struct {
	ExampleID   json.Number `json:"example_id"`
	Question    string      `json:"question_text"`
	Paragraph   string      `json:"paragraph_text"`
	NQAnswers   [][]qedSpan `json:"original_nq_answers"`
	Annotations struct {
		Answer []struct {
			ParagraphReference qedSpan `json:"paragraph_reference"`
		} `json:"answer"`
		SelectedSentence qedSpan `json:"selected_sentence"`
	} `json:"annotation"`
}

// LoadQED reads QED (JSON lines of {example_id, title_text, url,
// question_text, paragraph_text, original_nq_answers, annotation}). Fields
// used:
//
//	Prompt    = Passage: {paragraph_text}\nQuestion: {question_text}?\nExplain briefly using the passage, then answer.\nAnswer:
//	Answer    = the annotation's answer spans (paragraph_reference) joined by ", ";
//	            when the annotation has none (multi-sentence and "none"
//	            explanations), the first annotator's original_nq_answers spans
//	Reference = {annotation.selected_sentence} So, the answer is {Answer}.
//
// The question gets a "?" when it lacks one (NQ questions are lower-case and
// unpunctuated; they are otherwise kept as they are, as is the passage's
// tokenized spacing). IDs are "qed/<example_id>".
func LoadQED(path string) ([]Example, error) {
	b, err := readFile(path)
	if err != nil {
		return nil, err
	}
	return parseQED(b, path)
}

func parseQED(data []byte, name string) ([]Example, error) {
	var out []Example
	err := decodeRecords(data, name, func(i int, r *qedRecord) error {
		q := strings.TrimSpace(r.Question)
		p := strings.TrimSpace(r.Paragraph)
		if q == "" {
			return errors.New(`missing or empty "question_text"`)
		}
		if p == "" {
			return errors.New(`missing or empty "paragraph_text"`)
		}
		if !strings.HasSuffix(q, "?") {
			q += "?"
		}
		var spans []string
		for _, a := range r.Annotations.Answer {
			if s := strings.TrimSpace(a.ParagraphReference.String); s != "" {
				spans = append(spans, s)
			}
		}
		if len(spans) == 0 && len(r.NQAnswers) > 0 {
			for _, a := range r.NQAnswers[0] {
				if s := strings.TrimSpace(a.String); s != "" {
					spans = append(spans, s)
				}
			}
		}
		answer := strings.Join(spans, ", ")
		out = append(out, Example{
			ID:        "qed/" + idOr(r.ExampleID.String(), i),
			Prompt:    fmt.Sprintf(qedPrompt, p, q),
			Reference: cotReference(r.Annotations.SelectedSentence.String, answer),
			Answer:    answer,
		})
		return nil
	})
	return nonEmpty(out, name, err)
}

// idOr is id, or the record index when id is empty.
func idOr(id string, i int) string {
	if id == "" {
		return fmt.Sprint(i)
	}
	return id
}
