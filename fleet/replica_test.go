package fleet

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestReplicaLogKeepsLastLines: a replica that exits while starting leaves
// everything it wrote on stderr in its log — the last lines are the ones
// that say why it failed. The log was closed as soon as the process had
// exited, while the goroutine copying stderr into it still held lines read
// from the pipe: those were written to a closed file and lost.
func TestReplicaLogKeepsLastLines(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh:", err)
	}
	const lines = 2000
	// The lines go out in one burst just before the exit: most of them are
	// still being copied when the process is gone.
	script := fmt.Sprintf(`i=0; out=""; while [ $i -lt %d ]; do i=$((i+1)); out="$out
replica log line $i"; done; printf '%%s\n' "$out" >&2; exit 3`, lines)
	for run := range 5 {
		logPath := filepath.Join(t.TempDir(), "r0.log")
		_, err := startReplica("r0", []string{sh, "-c", script, "sh"}, nil, nil, logPath, 30*time.Second)
		if err == nil || !strings.Contains(err.Error(), "exited while starting") {
			t.Fatalf("run %d: a replica that exits at once: error %v, want one that says it exited while starting", run, err)
		}
		b, err := os.ReadFile(logPath)
		if err != nil {
			t.Fatal(err)
		}
		got := strings.Count(string(b), "replica log line ")
		if last := fmt.Sprintf("replica log line %d\n", lines); got != lines || !strings.HasSuffix(string(b), last) {
			t.Fatalf("run %d: the log holds %d of the %d lines the replica wrote (last %q), want all, ending with %q", run, got, lines, lastLine(string(b)), last)
		}
	}
}

func lastLine(s string) string {
	s = strings.TrimSuffix(s, "\n")
	return s[strings.LastIndexByte(s, '\n')+1:]
}
