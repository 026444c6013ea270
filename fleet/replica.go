package fleet

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// replica is one hlm serve process.
type replica struct {
	name   string
	cmd    *exec.Cmd
	addr   string // protocol address (--listen)
	health string // health endpoint URL
	done   chan struct{}
	err    error // exit status, once done is closed
}

// startReplica starts `serve… args --listen 127.0.0.1:0 --health 127.0.0.1:0`,
// logging to logPath, and returns once it listens and its health endpoint
// answers 200.
func startReplica(name string, serve, args, env []string, logPath string, timeout time.Duration) (*replica, error) {
	full := append(append(append([]string{}, serve[1:]...), args...), "--listen", "127.0.0.1:0", "--health", "127.0.0.1:0")
	cmd := exec.Command(serve[0], full...)
	cmd.Env = append(os.Environ(), env...)
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	cmd.Stdout = logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("replica %s: %w", name, err)
	}
	r := &replica{name: name, cmd: cmd, done: make(chan struct{})}
	addrs := make(chan [2]string, 1)
	copied := make(chan struct{}) // the log copy has written everything
	go func() {
		defer close(copied)
		// Copy the log, picking up the two addresses the server prints.
		var addr, health string
		sent := false
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(logf, line)
			if _, rest, ok := strings.Cut(line, "listening on "); ok && addr == "" {
				addr, _, _ = strings.Cut(rest, " ")
			}
			if _, rest, ok := strings.Cut(line, "health on http://"); ok && health == "" {
				h, _, _ := strings.Cut(rest, "/healthz")
				health = "http://" + h + "/healthz"
			}
			if addr != "" && health != "" && !sent {
				addrs <- [2]string{addr, health}
				sent = true
			}
		}
		io.Copy(logf, pr)
	}()
	go func() {
		r.err = cmd.Wait()
		// The copy may still hold the last lines read from the pipe (a
		// failing replica's reason): the log closes once they are written.
		pw.Close()
		<-copied
		logf.Close()
		close(r.done)
	}()
	deadline := time.After(timeout)
	select {
	case a := <-addrs:
		r.addr, r.health = a[0], a[1]
	case <-r.done:
		return nil, fmt.Errorf("replica %s exited while starting (%v); see %s", name, r.err, logPath)
	case <-deadline:
		r.kill()
		return nil, fmt.Errorf("replica %s did not report its addresses within %v; see %s", name, timeout, logPath)
	}
	for {
		if code, _ := r.healthStatus(); code == http.StatusOK {
			return r, nil
		}
		select {
		case <-r.done:
			return nil, fmt.Errorf("replica %s exited while starting (%v); see %s", name, r.err, logPath)
		case <-deadline:
			r.kill()
			return nil, fmt.Errorf("replica %s not healthy within %v; see %s", name, timeout, logPath)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// healthStatus is the HTTP status of the health endpoint (0 when it does
// not answer).
func (r *replica) healthStatus() (int, error) {
	c := http.Client{Timeout: time.Second}
	resp, err := c.Get(r.health)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// healthPort is the port of the health endpoint.
func (r *replica) healthPort() int {
	u := strings.TrimSuffix(strings.TrimPrefix(r.health, "http://"), "/healthz")
	_, p, _ := net.SplitHostPort(u)
	n, _ := strconv.Atoi(p)
	return n
}

// Drain is what a replica did when asked to stop.
type Drain struct {
	Saw503   bool          // its health endpoint answered 503 before it exited
	Duration time.Duration // from SIGTERM to exit
	Exit     error         // exit status (nil: exit code 0)
}

// stop sends SIGTERM, watches the health endpoint while the replica drains
// and waits for it to exit.
func (r *replica) stop(timeout time.Duration) (Drain, error) {
	start := time.Now()
	if err := r.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return Drain{}, fmt.Errorf("replica %s: %w", r.name, err)
	}
	var d Drain
	deadline := time.After(timeout)
	for {
		select {
		case <-r.done:
			d.Duration, d.Exit = time.Since(start), r.err
			return d, nil
		case <-deadline:
			r.kill()
			return d, fmt.Errorf("replica %s did not exit within %v of SIGTERM", r.name, timeout)
		case <-time.After(10 * time.Millisecond):
			if code, _ := r.healthStatus(); code == http.StatusServiceUnavailable {
				d.Saw503 = true
			}
		}
	}
}

// kill sends SIGKILL and waits for the process to be gone.
func (r *replica) kill() {
	r.cmd.Process.Kill()
	<-r.done
}

// exited reports whether the process has ended.
func (r *replica) exited() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

var errNoReplica = errors.New("fleet: no such replica")
