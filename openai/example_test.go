package openai_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"

	"github.com/hlmproject/hlm/openai"
)

// wordBackend "generates" the words of a fixed text, one piece per word.
type wordBackend struct{ text string }

func (wordBackend) Model() string { return "words" }

func (b wordBackend) Generate(ctx context.Context, req openai.Request, onText func(string)) (openai.Result, error) {
	res := openai.Result{PromptTokens: len(strings.Fields(req.Prompt)), FinishReason: openai.FinishLength}
	for i, w := range strings.SplitAfter(b.text, " ") {
		if i == req.MaxTokens {
			return res, nil
		}
		if err := ctx.Err(); err != nil {
			return res, err // cancelled: a stop string was found
		}
		onText(w)
		res.Text += w
		res.CompletionTokens++
	}
	res.FinishReason = openai.FinishStop
	return res, nil
}

func ExampleNewHandler() {
	srv := httptest.NewServer(openai.NewHandler(wordBackend{"the cat sat on the mat"}, openai.Options{}))
	defer srv.Close()

	resp, err := srv.Client().Post(srv.URL+"/v1/completions", "application/json",
		strings.NewReader(`{"prompt": "Tell me about cats.", "max_tokens": 16, "stop": ["on"]}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	var r struct {
		Object  string
		Choices []struct {
			Text         string
			FinishReason string `json:"finish_reason"`
		}
		Usage struct {
			PromptTokens     int `json:"prompt_tokens"`
			CompletionTokens int `json:"completion_tokens"`
		}
	}
	json.NewDecoder(resp.Body).Decode(&r)
	fmt.Printf("%s %q %s %d+%d\n", r.Object, r.Choices[0].Text, r.Choices[0].FinishReason, r.Usage.PromptTokens, r.Usage.CompletionTokens)
	// Output: text_completion "the cat sat " stop 4+4
}
