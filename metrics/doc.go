// Package metrics measures the quality of generated text against reference
// responses, and summarizes per-example values.
//
// ROUGE (Lin 2004) follows Google's rouge-score package with its defaults
// (no stemming): texts are lower-cased, every run of characters other than
// ASCII letters and digits becomes a space, and the tokens are what is left
// between spaces (Tokenize). ROUGE-N counts clipped n-gram overlaps and
// ROUGE-L uses the longest common subsequence; each gives precision (over
// the candidate), recall (over the reference) and their harmonic mean F1.
// Empty texts score 0. RougeLsum is the summary-level ROUGE-L over
// newline-separated sentences.
//
//	s := metrics.Rouge(output, ex.Reference)
//	fmt.Println(s.Rouge1.F1, s.Rouge2.F1, s.RougeL.F1)
//
// The embedding metric stands in for the sentence encoders the papers use
// (BERT, Universal Sentence Encoder): the cosine similarity of the averages
// of the GloVe vectors of the two texts' tokens (Embeddings.Cosine), with the
// same tokenization as ROUGE. It is NaN when neither text has a word in the
// vocabulary, and Summarize leaves NaNs out.
//
//	glove := metrics.LazyGloVe("../shared/models/glove/glove-100d-top40k.txt.gz")
//	e, err := glove()
//	...
//	sim := e.Cosine(output, ex.Reference)
//
// Mean, MeanStd, CI95 and Summarize report a metric over a data set with a
// Student-t 95% confidence interval of its mean.
package metrics
