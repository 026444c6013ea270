package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// chromium drives a headless Chromium through the DevTools protocol over
// --remote-debugging-pipe (messages are JSON, NUL-terminated; Chromium
// reads fd 3 and writes fd 4), attached to one page.
type chromium struct {
	cmd     *exec.Cmd
	w       io.WriteCloser
	r       *bufio.Reader
	id      int
	session string
}

// startChromium starts headless Chromium on about:blank, or skips the test
// when it is not installed.
func startChromium(t *testing.T) *chromium {
	t.Helper()
	bin := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			bin = p
			break
		}
	}
	if bin == "" {
		t.Skip("Chromium is not installed (Debian: apt-get install chromium; .ci/run installs it): skipping the live view's browser test")
	}
	toChrome, chromeIn, err := os.Pipe() // Chromium reads fd 3
	if err != nil {
		t.Fatal(err)
	}
	chromeOut, fromChrome, err := os.Pipe() // Chromium writes fd 4
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	cmd := exec.Command(bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
		"--remote-debugging-pipe", "--user-data-dir="+t.TempDir(), "--window-size=1100,900", "about:blank")
	cmd.ExtraFiles = []*os.File{toChrome, fromChrome}
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	toChrome.Close()
	fromChrome.Close()
	c := &chromium{cmd: cmd, w: chromeIn, r: bufio.NewReader(chromeOut)}
	t.Cleanup(func() {
		c.w.Close()
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("chromium's output:\n%s", logs.String())
		}
	})
	var targets struct {
		TargetInfos []struct{ TargetID, Type string } `json:"targetInfos"`
	}
	c.call(t, "Target.getTargets", nil, &targets)
	for _, ti := range targets.TargetInfos {
		if ti.Type == "page" {
			var att struct{ SessionID string }
			c.call(t, "Target.attachToTarget", map[string]any{"targetId": ti.TargetID, "flatten": true}, &att)
			c.session = att.SessionID
		}
	}
	if c.session == "" {
		t.Fatalf("no page target among %+v", targets.TargetInfos)
	}
	return c
}

// call sends a command (to the page once attached) and decodes its result.
func (c *chromium) call(t *testing.T, method string, params, result any) {
	t.Helper()
	c.id++
	msg := map[string]any{"id": c.id, "method": method, "params": params}
	if params == nil {
		msg["params"] = map[string]any{}
	}
	if c.session != "" {
		msg["sessionId"] = c.session
	}
	b, _ := json.Marshal(msg)
	if _, err := c.w.Write(append(b, 0)); err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	for {
		line, err := c.r.ReadBytes(0)
		if err != nil {
			t.Fatalf("%s: reading from chromium: %v", method, err)
		}
		var resp struct {
			ID     int             `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(line[:len(line)-1], &resp); err != nil {
			t.Fatalf("%s: %v in %q", method, err, line)
		}
		if resp.ID != c.id { // an event, or an answer to someone else
			continue
		}
		if resp.Error != nil {
			t.Fatalf("%s: %s", method, resp.Error.Message)
		}
		if result != nil {
			if err := json.Unmarshal(resp.Result, result); err != nil {
				t.Fatalf("%s: %v", method, err)
			}
		}
		return
	}
}

// eval evaluates a JavaScript expression in the page and decodes its value.
func (c *chromium) eval(t *testing.T, expr string, out any) {
	t.Helper()
	var r struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails any `json:"exceptionDetails"`
	}
	c.call(t, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true}, &r)
	if r.ExceptionDetails != nil {
		t.Fatalf("%s: %v", expr, r.ExceptionDetails)
	}
	if out != nil {
		if err := json.Unmarshal(r.Result.Value, out); err != nil {
			t.Fatalf("%s: %v (value %s)", expr, err, r.Result.Value)
		}
	}
}

// waitFor evaluates a boolean expression until it holds.
func (c *chromium) waitFor(t *testing.T, expr string, timeout time.Duration) {
	t.Helper()
	for deadline := time.Now().Add(timeout); ; {
		var ok bool
		c.eval(t, "!!("+expr+")", &ok)
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %v, still not %s", timeout, expr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// screenshot saves the page as a PNG.
func (c *chromium) screenshot(t *testing.T, path string) {
	t.Helper()
	var shot struct{ Data string }
	c.call(t, "Page.captureScreenshot", map[string]any{"format": "png"}, &shot)
	png, err := base64.StdEncoding.DecodeString(shot.Data)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// lineWriter collects a command's stderr and reports the first submatch
// of re.
type lineWriter struct {
	re    *regexp.Regexp
	found chan string
	mu    sync.Mutex
	buf   bytes.Buffer
}

func (w *lineWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if m := w.re.FindSubmatch(w.buf.Bytes()); m != nil {
		select {
		case w.found <- string(m[1]):
		default:
		}
	}
	return len(p), nil
}

// TestLiveViewInChromium: `hlm sim --ui` serves the live view; a headless
// Chromium loads it while the (paced) generation runs. When the run ends,
// the page's token spans are, in order, the trace's tokens with their
// positions and fates; each span's computed background is its fate's
// legend colour (five distinct colours); the skipped tokens carry the
// acceptance probabilities of the trace's check lines; the totals count
// the tokens; hovering a token shows its details. The screenshot (with the
// hover card) is kept: $HLM_UI_SCREENSHOT, default hlm-live-view.png in
// the temporary directory.
func TestLiveViewInChromium(t *testing.T) {
	chrome := startChromium(t)
	dir := t.TempDir()
	tracePath := filepath.Join(dir, "trace.jsonl")
	ctx, cancel := context.WithCancel(context.Background())
	stderr := &lineWriter{re: regexp.MustCompile(`live view at (http://\S+)`), found: make(chan string, 1)}
	done := make(chan int, 1)
	// u-hlm with a low threshold and the bonus token on (one-token rounds
	// have no bonus by default): skipped, accepted, resampled and bonus
	// tokens in 40; about 3.5 virtual seconds played at 1.5×.
	go func() {
		done <- run(ctx, []string{"sim", "--llm", stories260K, "--slm", stories260K + "@exit=2", "--method", "u-hlm", "--set", "u_th=0.01", "--set", "bonus=true",
			"--prompt", "Once upon a time", "--max-tokens", "40", "--trace", tracePath, "--ui", "127.0.0.1:0", "--ui-pace", "1.5"}, io.Discard, stderr)
	}()
	defer func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("hlm sim exited with %d: %s", code, stderr.String())
		}
	}()
	var url string
	select {
	case url = <-stderr.found:
	case code := <-done:
		done <- code
		t.Fatalf("hlm sim ended (%d) without a live view: %s", code, stderr.String())
	case <-time.After(30 * time.Second):
		t.Fatal("no live view address after 30 s")
	}
	chrome.call(t, "Page.enable", nil, nil)
	chrome.call(t, "Page.navigate", map[string]any{"url": url}, nil)
	chrome.waitFor(t, `document.querySelector("#run-1")`, 20*time.Second)
	var during struct {
		Spans int
		Done  bool
	}
	chrome.eval(t, `({Spans: document.querySelectorAll("#run-1 .text .tok").length, Done: document.querySelector("#run-1").dataset.done === "1"})`, &during)
	t.Logf("page loaded during the run: %d token spans so far, finished %v", during.Spans, during.Done)
	chrome.waitFor(t, `document.querySelector("#run-1")?.dataset.done === "1"`, 60*time.Second)

	var page struct {
		Legend map[string]string
		Spans  []struct {
			Kind, Text, Bg, Accept string
			Pos, Token             int
		}
		Tokens, Status, Summary string
	}
	chrome.eval(t, `({
		Legend: Object.fromEntries([...document.querySelectorAll("#legend .tok")].map(s => [s.dataset.fate, getComputedStyle(s).backgroundColor])),
		Spans: [...document.querySelectorAll("#run-1 .text .tok")].map(s => ({Kind: s.dataset.kind, Pos: +s.dataset.pos, Token: +s.dataset.token,
			Text: s.textContent, Bg: getComputedStyle(s).backgroundColor, Accept: s.dataset.accept || ""})),
		Tokens: document.getElementById("t-tokens").textContent,
		Status: document.getElementById("status").dataset.state,
		Summary: document.querySelector("#run-1 .summary")?.textContent || "",
	})`, &page)

	// The trace the same run wrote.
	b, err := os.ReadFile(tracePath)
	if err != nil {
		t.Fatal(err)
	}
	type event struct {
		Pos, Token int
		Kind       string
		Accept     *float64
	}
	var tokens []event
	checks := map[int]float64{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var e event
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatal(err)
		}
		if e.Kind == "check" {
			checks[e.Pos] = *e.Accept
			continue
		}
		tokens = append(tokens, e)
	}

	colours := map[string]bool{}
	for _, fate := range []string{"skip", "accepted", "resampled", "bonus", "llm"} {
		c := page.Legend[fate]
		if c == "" || c == "rgba(0, 0, 0, 0)" || colours[c] {
			t.Errorf("legend colour of %s: %q (legend %v): missing, transparent or shared", fate, c, page.Legend)
		}
		colours[c] = true
	}
	if len(page.Spans) != len(tokens) {
		t.Fatalf("%d token spans on the page, %d tokens in the trace", len(page.Spans), len(tokens))
	}
	fates := map[string]int{}
	for i, s := range page.Spans {
		e := tokens[i]
		if s.Kind != e.Kind || s.Pos != e.Pos || s.Token != e.Token {
			t.Errorf("span %d is %s token %d at %d; the trace has %s token %d at %d", i, s.Kind, s.Token, s.Pos, e.Kind, e.Token, e.Pos)
		}
		if s.Bg != page.Legend[e.Kind] {
			t.Errorf("span %d (%s) has background %s, its fate's legend colour is %s", i, e.Kind, s.Bg, page.Legend[e.Kind])
		}
		if a, ok := checks[e.Pos]; ok {
			if got, err := strconv.ParseFloat(s.Accept, 64); err != nil || got != a {
				t.Errorf("skipped token at %d: acceptance %q on the page, %v in the trace", e.Pos, s.Accept, a)
			}
		}
		fates[e.Kind]++
	}
	if len(fates) < 4 || len(checks) == 0 {
		t.Errorf("the run shows too little: fates %v, %d checks", fates, len(checks))
	}
	if page.Tokens != fmt.Sprint(len(tokens)) || page.Status != "done" || !strings.Contains(page.Summary, "bits/token") {
		t.Errorf("totals %q tokens (want %d), status %q, summary %q", page.Tokens, len(tokens), page.Status, page.Summary)
	}

	// Hover the first resampled token: the card shows its details.
	var rect struct{ X, Y float64 }
	chrome.eval(t, `(() => { const r = document.querySelector("#run-1 .text .fate-resampled").getBoundingClientRect(); return {X: r.x + r.width/2, Y: r.y + r.height/2}; })()`, &rect)
	chrome.call(t, "Input.dispatchMouseEvent", map[string]any{"type": "mouseMoved", "x": rect.X, "y": rect.Y}, nil)
	chrome.waitFor(t, `!document.getElementById("tip").hidden`, 5*time.Second)
	var tip string
	chrome.eval(t, `document.getElementById("tip").textContent`, &tip)
	for _, want := range []string{"resampled", "uncertainty u", "importance", "bits", "acceptance prob.", "rejected draft"} {
		if !strings.Contains(tip, want) {
			t.Errorf("hover card lacks %q: %q", want, tip)
		}
	}
	shot := os.Getenv("HLM_UI_SCREENSHOT")
	if shot == "" {
		shot = filepath.Join(os.TempDir(), "hlm-live-view.png")
	}
	chrome.screenshot(t, shot)
	t.Logf("%d tokens %v checked against the trace; screenshot: %s", len(tokens), fates, shot)
}
