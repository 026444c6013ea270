package live

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hlmproject/hlm/hybrid"
)

// subscribe opens the event stream at url. The server registers a
// subscriber before it sends the response's headers, so once subscribe
// returns, every later event reaches this stream.
func subscribe(url string) (*http.Response, error) {
	resp, err := http.Get(url)
	if err != nil {
		return nil, err
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		resp.Body.Close()
		return nil, fmt.Errorf("content type %q", ct)
	}
	return resp, nil
}

// readEvents reads Server-Sent Events from url until an "end" event.
func readEvents(url string) ([]map[string]any, error) {
	resp, err := subscribe(url)
	if err != nil {
		return nil, err
	}
	return readStream(resp)
}

// readStream reads the events of a subscription until an "end" event and
// closes it.
func readStream(resp *http.Response) ([]map[string]any, error) {
	defer resp.Body.Close()
	var evs []map[string]any
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var ev map[string]any
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			return nil, fmt.Errorf("event %q: %v", data, err)
		}
		evs = append(evs, ev)
		if ev["type"] == "end" {
			return evs, nil
		}
	}
	return nil, fmt.Errorf("stream ended without an end event: %v", sc.Err())
}

// TestEvents: trace lines written in arbitrary pieces become token and
// check events in order, with the text of each token, the end-of-sequence
// mark and a wall time; a subscriber that comes after the run gets the
// whole history; the page and its assets are served from the binary.
func TestEvents(t *testing.T) {
	v := New()
	srv := httptest.NewServer(v.Handler())
	defer srv.Close()

	type result struct {
		evs []map[string]any
		err error
	}
	resp, err := subscribe(srv.URL + "/events") // subscribed before the run begins
	if err != nil {
		t.Fatal(err)
	}
	live := make(chan result, 1)
	go func() { evs, err := readStream(resp); live <- result{evs, err} }()

	texts := map[int]string{7: "Once", 9: " upon"}
	run := v.Begin(RunInfo{Title: "test", Method: "u-hlm", Prompt: "p", IsEnd: func(id int) bool { return id == 2 }, Text: func(id int) string { return texts[id] }})
	trace := `{"round":1,"pos":3,"token":7,"kind":"skip","t":0.5,"u":0.25}
{"round":2,"pos":4,"token":9,"kind":"accepted","t":1,"bits":12,"up_bits":40,"accept":0.75}
{"round":2,"pos":3,"token":7,"kind":"check","t":1,"accept":0.5}
not json
{"round":2,"pos":5,"token":2,"kind":"bonus","t":1,"up_bits":40}
`
	for len(trace) > 0 { // in pieces of 17 bytes, cutting lines
		n := min(17, len(trace))
		if _, err := run.Write([]byte(trace[:n])); err != nil {
			t.Fatal(err)
		}
		trace = trace[n:]
	}
	run.End(hybrid.Result{Method: "u-hlm", Tokens: []int{7, 9}, Text: "Once upon", Rounds: 2}, nil)

	first := <-live
	late, err := readEvents(srv.URL + "/events")
	if first.err != nil || err != nil {
		t.Fatalf("live subscriber: %v; late subscriber: %v", first.err, err)
	}
	for name, evs := range map[string][]map[string]any{"live": first.evs, "late": late} {
		var got []string
		for _, ev := range evs {
			s := ev["type"].(string)
			if k, ok := ev["kind"]; ok {
				s += ":" + k.(string)
			}
			if x, ok := ev["text"]; ok {
				s += ":" + x.(string)
			}
			got = append(got, s)
		}
		want := "run token:skip:Once token:accepted: upon check:check token:bonus:⏎ end"
		if strings.Join(got, " ") != want {
			t.Errorf("%s subscriber: events %q, want %q", name, strings.Join(got, " "), want)
		}
		if evs[2]["accept"] != 0.75 || evs[2]["up_bits"] != 40.0 || evs[1]["u"] != 0.25 {
			t.Errorf("%s: fields lost: %v %v", name, evs[1], evs[2])
		}
		if sum := evs[len(evs)-1]["summary"].(map[string]any); sum["rounds"] != 2.0 || sum["tokens"] != nil {
			t.Errorf("%s: summary %v (tokens should be left out)", name, sum)
		}
	}

	for path, want := range map[string]string{"/": `<script src="app.js">`, "/app.js": "EventSource", "/style.css": "--resampled"} {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), want) {
			t.Errorf("GET %s: %d, lacks %q", path, resp.StatusCode, want)
		}
	}
}

// TestPace: with Pace 4 a token at virtual time 0.4 s is not published
// before 0.1 s of wall time.
func TestPace(t *testing.T) {
	v := New()
	run := v.Begin(RunInfo{Pace: 4})
	start := time.Now()
	run.Write([]byte(`{"round":1,"pos":1,"token":3,"kind":"llm","t":0.4}` + "\n"))
	if d := time.Since(start); d < 100*time.Millisecond {
		t.Errorf("published after %v, want ≥ 100 ms", d)
	}
}

// TestPaceDone: a closed Done ends the holding at once — a token at virtual
// time 1,000 s with Pace 1 is published within a second of Done closing
// (a Ctrl-C of hlm sim --ui --ui-pace 1 waited out every token).
func TestPaceDone(t *testing.T) {
	v := New()
	done := make(chan struct{})
	run := v.Begin(RunInfo{Pace: 1, Done: done})
	wrote := make(chan struct{})
	go func() {
		run.Write([]byte(`{"round":1,"pos":1,"token":3,"kind":"llm","t":1000}` + "\n"))
		close(wrote)
	}()
	time.Sleep(20 * time.Millisecond)
	close(done)
	select {
	case <-wrote:
	case <-time.After(time.Second):
		t.Fatal("the token is still held a second after Done closed")
	}
	start := time.Now()
	run.Write([]byte(`{"round":2,"pos":2,"token":4,"kind":"llm","t":2000}` + "\n"))
	if d := time.Since(start); d > time.Second {
		t.Errorf("a later token was held %v after Done closed", d)
	}
}
