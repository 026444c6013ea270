package fleet

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// Config is a fleet: how to run one replica, how many, and the balancer.
type Config struct {
	// Serve is the command that runs `hlm serve` up to its flags, e.g.
	// {"/usr/local/bin/hlm", "serve"}; Env is added to its environment.
	Serve []string
	Env   []string
	// Args are the flags of every replica (model, limits, …). The fleet
	// adds --listen and --health on fresh loopback ports, and --drain-delay
	// (long enough for HAProxy to see the 503) unless Args set it.
	Args     []string
	Replicas int
	Balance  string        // one of Balances (default roundrobin)
	Check    time.Duration // HAProxy health-check interval (default 200 ms)
	HAProxy  string        // haproxy binary (default: haproxy on the PATH)
	// Dir holds the HAProxy configuration, its runtime socket and every
	// process's log (required; the socket path must stay short).
	Dir          string
	StartTimeout time.Duration // a replica loads its model and answers 200 (default 60 s)
	StopTimeout  time.Duration // a replica drains and exits after SIGTERM (default 60 s)
}

func (c *Config) defaults() error {
	if len(c.Serve) == 0 || c.Replicas < 1 || c.Dir == "" {
		return errors.New("fleet: Serve, Replicas ≥ 1 and Dir are required")
	}
	if c.Balance == "" {
		c.Balance = "roundrobin"
	}
	if !slices.Contains(Balances, c.Balance) {
		return fmt.Errorf("fleet: balance %q (want one of %s)", c.Balance, strings.Join(Balances, ", "))
	}
	if c.Check <= 0 {
		c.Check = 200 * time.Millisecond
	}
	if c.HAProxy == "" {
		p, err := exec.LookPath("haproxy")
		if err != nil {
			return fmt.Errorf("fleet: HAProxy not found (Debian: apt-get install haproxy): %w", err)
		}
		c.HAProxy = p
	}
	if c.StartTimeout <= 0 {
		c.StartTimeout = 60 * time.Second
	}
	if c.StopTimeout <= 0 {
		c.StopTimeout = 60 * time.Second
	}
	if !slices.ContainsFunc(c.Args, func(a string) bool { return strings.HasPrefix(strings.TrimLeft(a, "-"), "drain-delay") }) {
		c.Args = append(slices.Clone(c.Args), "--drain-delay", (time.Duration(fall+1) * c.Check).String())
	}
	return nil
}

// fall is how many failed checks take a replica out of the rotation.
const fall = 2

// Fleet is running replicas behind a running HAProxy.
type Fleet struct {
	// Addr is the balancer's address: the one devices dial.
	Addr string

	cfg      Config
	socket   string
	haproxy  *exec.Cmd
	haDone   chan struct{}
	mu       sync.Mutex
	replicas []*replica
}

// Start starts the replicas, then HAProxy in front of them, and returns
// when HAProxy reports every replica up.
func Start(cfg Config) (*Fleet, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	f := &Fleet{cfg: cfg, socket: filepath.Join(cfg.Dir, "haproxy.sock"), replicas: make([]*replica, cfg.Replicas)}
	for i := range f.replicas {
		r, err := f.startReplica(i)
		if err != nil {
			f.Close()
			return nil, err
		}
		f.replicas[i] = r
	}
	if err := f.startHAProxy(); err != nil {
		f.Close()
		return nil, err
	}
	if err := f.WaitUp(); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

func (f *Fleet) name(i int) string { return fmt.Sprintf("r%d", i) }

func (f *Fleet) startReplica(i int) (*replica, error) {
	return startReplica(f.name(i), f.cfg.Serve, f.cfg.Args, f.cfg.Env, filepath.Join(f.cfg.Dir, f.name(i)+".log"), f.cfg.StartTimeout)
}

// HAProxyConfig is the configuration HAProxy runs with (the replicas'
// current addresses, the frontend as the inherited socket fd@3).
func (f *Fleet) HAProxyConfig() HAProxyConfig {
	c := HAProxyConfig{Bind: "fd@3", Balance: f.cfg.Balance, Check: f.cfg.Check, Fall: fall, Socket: f.socket}
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, r := range f.replicas {
		c.Backends = append(c.Backends, Backend{Name: f.name(i), Addr: r.addr, HealthPort: r.healthPort()})
	}
	return c
}

// startHAProxy binds the frontend here and hands the socket to HAProxy.
func (f *Fleet) startHAProxy() error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	defer ln.Close()
	lf, err := ln.(*net.TCPListener).File()
	if err != nil {
		return err
	}
	defer lf.Close()
	cfgPath := filepath.Join(f.cfg.Dir, "haproxy.cfg")
	if err := os.WriteFile(cfgPath, []byte(f.HAProxyConfig().String()), 0o644); err != nil {
		return err
	}
	logf, err := os.Create(filepath.Join(f.cfg.Dir, "haproxy.log"))
	if err != nil {
		return err
	}
	cmd := exec.Command(f.cfg.HAProxy, "-db", "-f", cfgPath)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.ExtraFiles = []*os.File{lf} // fd 3
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("haproxy: %w", err)
	}
	f.haproxy, f.haDone = cmd, make(chan struct{})
	go func() { cmd.Wait(); logf.Close(); close(f.haDone) }()
	f.Addr = ln.Addr().String()
	// The runtime socket appears once HAProxy has read its configuration.
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := runtime(f.socket, "show info"); err == nil {
			return nil
		}
		select {
		case <-f.haDone:
			log, _ := os.ReadFile(filepath.Join(f.cfg.Dir, "haproxy.log"))
			return fmt.Errorf("haproxy exited at start:\n%s", log)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return errors.New("haproxy: no runtime socket after 10 s")
		}
	}
}

// Status is HAProxy's view of each replica ("UP", "DOWN", "MAINT", …).
func (f *Fleet) Status() ([]string, error) {
	out, err := runtime(f.socket, "show stat")
	if err != nil {
		return nil, err
	}
	st, err := serverStatus(out, "replicas")
	if err != nil {
		return nil, err
	}
	res := make([]string, f.cfg.Replicas)
	for i := range res {
		res[i] = st[f.name(i)]
	}
	return res, nil
}

// WaitUp waits until HAProxy reports every replica up.
func (f *Fleet) WaitUp() error {
	for i := range f.cfg.Replicas {
		if err := f.waitUp(i); err != nil {
			return err
		}
	}
	return nil
}

// waitUp waits until HAProxy reports replica i up.
func (f *Fleet) waitUp(i int) error {
	deadline := time.Now().Add(f.cfg.StartTimeout)
	for {
		st, err := f.Status()
		if err == nil && st[i] == "UP" {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("HAProxy does not see replica %s up (status %v, %v)", f.name(i), st, err)
		}
		time.Sleep(f.cfg.Check / 4)
	}
}

// Kill sends SIGKILL to replica i and waits until HAProxy takes it out.
func (f *Fleet) Kill(i int) error {
	r, err := f.replica(i)
	if err != nil {
		return err
	}
	r.kill()
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, err := f.Status()
		if err == nil && strings.HasPrefix(st[i], "DOWN") {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("HAProxy still sees killed replica %s as %v (%v)", f.name(i), st, err)
		}
		time.Sleep(f.cfg.Check / 4)
	}
}

// Stop sends SIGTERM to replica i and waits until it has drained and exited.
func (f *Fleet) Stop(i int) (Drain, error) {
	r, err := f.replica(i)
	if err != nil {
		return Drain{}, err
	}
	return r.stop(f.cfg.StopTimeout)
}

// Replace starts a new replica i (its previous process must have exited)
// on fresh ports, points HAProxy at it and waits until HAProxy sees it up.
func (f *Fleet) Replace(i int) error {
	old, err := f.replica(i)
	if err != nil {
		return err
	}
	if !old.exited() {
		return fmt.Errorf("fleet: replica %s is still running", f.name(i))
	}
	r, err := f.startReplica(i)
	if err != nil {
		return err
	}
	f.mu.Lock()
	f.replicas[i] = r
	f.mu.Unlock()
	host, port, _ := net.SplitHostPort(r.addr)
	for _, c := range []string{
		fmt.Sprintf("set server replicas/%s addr %s port %s", f.name(i), host, port),
		fmt.Sprintf("set server replicas/%s check-port %d", f.name(i), r.healthPort()),
	} {
		out, err := runtime(f.socket, c)
		if err != nil {
			return err
		}
		if out = strings.TrimSpace(out); out != "" && !strings.Contains(out, "changed") {
			return fmt.Errorf("HAProxy: %s: %s", c, out)
		}
	}
	return f.waitUp(i)
}

// Restart is Stop then Replace: a rolling restart's step.
func (f *Fleet) Restart(i int) (Drain, error) {
	d, err := f.Stop(i)
	if err != nil {
		return d, err
	}
	return d, f.Replace(i)
}

func (f *Fleet) replica(i int) (*replica, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if i < 0 || i >= len(f.replicas) || f.replicas[i] == nil {
		return nil, errNoReplica
	}
	return f.replicas[i], nil
}

// Close kills HAProxy and every replica.
func (f *Fleet) Close() error {
	if f.haproxy != nil {
		f.haproxy.Process.Kill()
		<-f.haDone
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, r := range f.replicas {
		if r != nil {
			r.kill()
		}
	}
	return nil
}
