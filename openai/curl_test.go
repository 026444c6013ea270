package openai

import (
	"context"
	"net/http/httptest"
	"os/exec"
	"testing"
	"time"
)

// TestCurlScript runs testdata/curl_test.sh, which uses stock curl the way
// a user would, against the handler with the fake backend, without and with
// an API key.
func TestCurlScript(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash on PATH: skipping the curl script")
	}
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("no curl on PATH: skipping the curl script")
	}
	for _, key := range []string{"", "k3y"} {
		name := "no key"
		if key != "" {
			name = "key"
		}
		t.Run(name, func(t *testing.T) {
			b := &fakeBackend{pieces: []string{"Once", " upon", " a \"time\"", "\n"}, prompt: 4, finish: FinishLength}
			srv := httptest.NewServer(NewHandler(b, Options{APIKey: key}))
			defer srv.Close()
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			args := []string{"testdata/curl_test.sh", srv.URL}
			if key != "" {
				args = append(args, key)
			}
			out, err := exec.CommandContext(ctx, bash, args...).CombinedOutput()
			if err != nil {
				t.Fatalf("curl_test.sh: %v\n%s", err, out)
			}
			t.Logf("%s", out)
		})
	}
}
