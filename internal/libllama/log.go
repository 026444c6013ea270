package libllama

import (
	"os"
	"strings"
	"sync"
)

// llama.cpp's log (ggml_log_level).
const (
	logDebug = 1
	logInfo  = 2
	logWarn  = 3
	logError = 4
	logCont  = 5 // continues the previous message
)

// logBuf keeps llama.cpp's recent warning and error lines, numbered, so an
// error can quote what llama.cpp logged during the call that failed.
var logBuf struct {
	mu     sync.Mutex
	lines  []logLine // the last maxLogLines
	next   uint64    // number of the next line
	last   int       // level of the previous message (for logCont)
	echo   bool      // HLM_LLAMA_LOG=1: copy everything to stderr
	pend   strings.Builder
	pendLv int
}

type logLine struct {
	n     uint64
	level int
	text  string
}

const maxLogLines = 64

// logMessage receives one llama.cpp log call. Messages arrive in pieces; a
// line is complete at its newline.
func logMessage(level int, text string) {
	logBuf.mu.Lock()
	defer logBuf.mu.Unlock()
	if logBuf.echo {
		os.Stderr.WriteString(text)
	}
	if level == logCont {
		level = logBuf.last
	}
	logBuf.last = level
	if level < logWarn {
		return
	}
	if logBuf.pend.Len() > 0 && logBuf.pendLv != level {
		flushLine()
	}
	logBuf.pendLv = level
	for {
		i := strings.IndexByte(text, '\n')
		if i < 0 {
			logBuf.pend.WriteString(text)
			return
		}
		logBuf.pend.WriteString(text[:i])
		flushLine()
		text = text[i+1:]
	}
}

func flushLine() {
	s := strings.TrimSpace(logBuf.pend.String())
	logBuf.pend.Reset()
	if s == "" {
		return
	}
	logBuf.lines = append(logBuf.lines, logLine{logBuf.next, logBuf.pendLv, s})
	logBuf.next++
	if len(logBuf.lines) > maxLogLines {
		logBuf.lines = logBuf.lines[len(logBuf.lines)-maxLogLines:]
	}
}

// logMark is the number of the next log line.
func logMark() uint64 {
	logBuf.mu.Lock()
	defer logBuf.mu.Unlock()
	return logBuf.next
}

// logErrorsSince joins the error lines (warnings when there is no error)
// logged since mark.
func logErrorsSince(mark uint64) string {
	logBuf.mu.Lock()
	defer logBuf.mu.Unlock()
	if logBuf.pend.Len() > 0 {
		flushLine()
	}
	var errs, warns []string
	for _, l := range logBuf.lines {
		if l.n < mark {
			continue
		}
		if l.level >= logError {
			errs = append(errs, l.text)
		} else {
			warns = append(warns, l.text)
		}
	}
	if len(errs) == 0 {
		errs = warns
	}
	if len(errs) > 4 {
		errs = errs[len(errs)-4:]
	}
	return strings.Join(errs, "; ")
}

var installOnce sync.Once

// installLog routes llama.cpp's log to logMessage (once per process).
func installLog(l *Lib) {
	installOnce.Do(func() {
		logBuf.echo = os.Getenv("HLM_LLAMA_LOG") == "1"
		l.f.logSet(logCallback(), 0)
	})
}
