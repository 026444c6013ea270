// Package dataset loads the prompt sets hlm evaluates on: TinyStories text,
// plain prompt files, and, with reference responses, the instruction and QA
// sets the papers use (Stanford Alpaca and its seed tasks, AlpacaEval, and
// CREAK, StrategyQA and QED from the FLAN collection).
//
// Every loader returns []Example. Prompt is what the device model is fed;
// Reference is the ground-truth response that quality metrics (ROUGE,
// embedding cosine similarity) compare the output with; Answer is the short
// gold answer of the QA sets; Text is a whole story for the language-model
// text sets. Load dispatches on a name from Names, Default gives a set's
// usual file under the shared directory, and Sample draws the seeded subset
// an experiment runs on:
//
//	ex, err := dataset.Load("alpaca", dataset.Default("alpaca", "../shared"))
//	...
//	prompts := dataset.Sample(ex, 100, 1)
//
// # Prompt templates
//
// Alpaca and its seed tasks use the Stanford Alpaca template (AlpacaPrompt);
// AlpacaEval instructions are used verbatim. The QA sets ask for a short
// explanation and then the answer, and their references follow FLAN's
// chain-of-thought targets, "{explanation} So, the answer is {answer}."; see
// LoadCREAK, LoadStrategyQA and LoadQED for the exact fields.
//
// # Formats and errors
//
// The JSON loaders accept either a JSON array of records or JSON lines (the
// shared CREAK files are JSON lines despite their .json extension). Unknown
// fields are ignored; a missing prompt field, a wrongly typed field or bad
// JSON is an error wrapping ErrMalformed that names the file, the line and
// the record. A record without a gold answer (CREAK's unlabelled test split)
// loads with an empty Reference and Answer; so do the two Alpaca and two
// AlpacaEval records whose output is empty. Callers computing quality skip
// examples with an empty Reference.
package dataset
