package dataset

import (
	"errors"
	"fmt"
	"strings"
)

// The Stanford Alpaca prompt templates, byte for byte as in
// tatsu-lab/stanford_alpaca train.py (PROMPT_DICT). The model's response
// follows "### Response:" directly.
const (
	alpacaWithInput = "Below is an instruction that describes a task, paired with an input that provides further context. " +
		"Write a response that appropriately completes the request.\n\n" +
		"### Instruction:\n%s\n\n### Input:\n%s\n\n### Response:"
	alpacaNoInput = "Below is an instruction that describes a task. " +
		"Write a response that appropriately completes the request.\n\n" +
		"### Instruction:\n%s\n\n### Response:"
)

// AlpacaPrompt formats an instruction (and optional input) with the Stanford
// Alpaca template. As in the original, the with-input form is used exactly
// when input != "" (so the literal "Noinput" some records carry is kept):
//
//	Below is an instruction that describes a task, paired with an input that provides further context. Write a response that appropriately completes the request.
//
//	### Instruction:
//	{instruction}
//
//	### Input:
//	{input}
//
//	### Response:
//
// and without input:
//
//	Below is an instruction that describes a task. Write a response that appropriately completes the request.
//
//	### Instruction:
//	{instruction}
//
//	### Response:
func AlpacaPrompt(instruction, input string) string {
	if input != "" {
		return fmt.Sprintf(alpacaWithInput, instruction, input)
	}
	return fmt.Sprintf(alpacaNoInput, instruction)
}

var errNoInstruction = errors.New(`missing or empty "instruction"`)

// alpacaRecord is one record of alpaca_data.json and its subsets.
type alpacaRecord struct {
	Instruction string `json:"instruction"`
	Input       string `json:"input"`
	Output      string `json:"output"`
}

// LoadAlpaca reads Stanford Alpaca data (a JSON array of {instruction,
// input, output}, e.g. alpaca/alpaca_5000.json). Prompt is AlpacaPrompt(
// instruction, input) and Reference the output (empty for the few records
// whose output is empty). IDs are "alpaca/<index>".
func LoadAlpaca(path string) ([]Example, error) {
	b, err := readFile(path)
	if err != nil {
		return nil, err
	}
	return parseAlpaca(b, path)
}

func parseAlpaca(data []byte, name string) ([]Example, error) {
	var out []Example
	err := decodeRecords(data, name, func(i int, r *alpacaRecord) error {
		if strings.TrimSpace(r.Instruction) == "" {
			return errNoInstruction
		}
		out = append(out, Example{
			ID:        fmt.Sprintf("alpaca/%d", i),
			Prompt:    AlpacaPrompt(r.Instruction, r.Input),
			Reference: r.Output,
		})
		return nil
	})
	return nonEmpty(out, name, err)
}

// seedTask is one line of the Alpaca (self-instruct) seed_tasks.jsonl.
type seedTask struct {
	ID          string         `json:"id"`
	Instruction string         `json:"instruction"`
	Instances   []alpacaRecord `json:"instances"` // input and output only
}

// LoadAlpacaSeed reads the Alpaca seed tasks (JSON lines of {id, name,
// instruction, instances: [{input, output}], is_classification}). Each
// instance is one Example: Prompt is AlpacaPrompt(instruction, input) and
// Reference the instance output. IDs are "alpaca-seed/<id>", with "#k"
// appended for the k-th instance when k > 0 (every shared task has one).
func LoadAlpacaSeed(path string) ([]Example, error) {
	b, err := readFile(path)
	if err != nil {
		return nil, err
	}
	return parseAlpacaSeed(b, path)
}

func parseAlpacaSeed(data []byte, name string) ([]Example, error) {
	var out []Example
	err := decodeRecords(data, name, func(i int, r *seedTask) error {
		if strings.TrimSpace(r.Instruction) == "" {
			return errNoInstruction
		}
		if len(r.Instances) == 0 {
			return errors.New(`no "instances"`)
		}
		id := r.ID
		if id == "" {
			id = fmt.Sprint(i)
		}
		for k, in := range r.Instances {
			ex := Example{
				ID:        "alpaca-seed/" + id,
				Prompt:    AlpacaPrompt(r.Instruction, in.Input),
				Reference: in.Output,
			}
			if k > 0 {
				ex.ID += fmt.Sprintf("#%d", k)
			}
			out = append(out, ex)
		}
		return nil
	})
	return nonEmpty(out, name, err)
}

// alpacaEvalRecord is one record of an AlpacaEval model-outputs file.
type alpacaEvalRecord struct {
	Dataset     string `json:"dataset"`
	Instruction string `json:"instruction"`
	Output      string `json:"output"`
}

// LoadAlpacaEval reads an AlpacaEval outputs file (a JSON array of
// {dataset, instruction, output, generator}, e.g. the 805 reference
// text-davinci-003 outputs). Prompt is the instruction verbatim (no
// template: wrap it with AlpacaPrompt(ex.Prompt, "") or a chat template as
// the model needs) and Reference the output. IDs are "alpaca-eval/<index>".
func LoadAlpacaEval(path string) ([]Example, error) {
	b, err := readFile(path)
	if err != nil {
		return nil, err
	}
	return parseAlpacaEval(b, path)
}

func parseAlpacaEval(data []byte, name string) ([]Example, error) {
	var out []Example
	err := decodeRecords(data, name, func(i int, r *alpacaEvalRecord) error {
		if strings.TrimSpace(r.Instruction) == "" {
			return errNoInstruction
		}
		out = append(out, Example{
			ID:        fmt.Sprintf("alpaca-eval/%d", i),
			Prompt:    r.Instruction,
			Reference: r.Output,
		})
		return nil
	})
	return nonEmpty(out, name, err)
}

// nonEmpty passes err through and otherwise rejects a file without records.
func nonEmpty(out []Example, name string, err error) ([]Example, error) {
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: %w: no records", name, ErrMalformed)
	}
	return out, nil
}
