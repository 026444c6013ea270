package fleet

import (
	"encoding/csv"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"time"
)

// Balances are the HAProxy balance algorithms the configuration supports:
// round robin (any replica; a reconnecting device usually lands on another
// one and its session is opened again there) and source (a consistent
// hash of the device's address, so a device returns to the replica that
// holds its session and KV cache while that replica is up).
var Balances = []string{"roundrobin", "source"}

// Backend is one replica as HAProxy sees it.
type Backend struct {
	Name       string // server name in the backend
	Addr       string // host:port of hlm serve --listen
	HealthPort int    // port of hlm serve --health
}

// HAProxyConfig describes an HAProxy configuration for hlm replicas.
type HAProxyConfig struct {
	Bind     string // frontend address devices dial, e.g. "0.0.0.0:7140", or "fd@3"
	Balance  string // one of Balances
	Backends []Backend
	Check    time.Duration // health-check interval (inter)
	Fall     int           // failed checks before a replica is taken out
	Socket   string        // runtime API socket path ("": none)
}

// String renders the configuration file.
func (c HAProxyConfig) String() string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	w("# hlm serve replicas behind HAProxy in TCP mode (docs/deploy.md).")
	w("global")
	if c.Socket != "" {
		w("    # runtime API: a restarted replica's new address (set server ... addr)")
		w("    stats socket %s mode 600 level admin", c.Socket)
	}
	w("")
	w("defaults")
	w("    mode tcp")
	w("    timeout connect 1s")
	w("    timeout check 1s")
	w("    # longer than hlm serve --idle-timeout (5 min): a device that thinks")
	w("    # between rounds is not cut off by the balancer")
	w("    timeout client 6m")
	w("    timeout server 6m")
	w("    # a connection refused by a replica that just died goes to another")
	w("    retries 3")
	w("    option redispatch")
	w("")
	w("frontend hlm")
	w("    bind %s", c.Bind)
	w("    default_backend replicas")
	w("")
	w("backend replicas")
	w("    balance %s", c.Balance)
	if c.Balance == "source" {
		w("    # consistent hashing: when a replica goes down, only its devices move")
		w("    hash-type consistent")
	}
	w("    # hlm serve --health: 200 only when the model is loaded and sessions")
	w("    # are accepted; 503 while draining (SIGTERM, /drain)")
	w("    option httpchk GET /healthz")
	w("    http-check expect status 200")
	w("    default-server inter %s fall %d rise 1", haDuration(c.Check), c.Fall)
	for _, s := range c.Backends {
		w("    server %s %s check port %d", s.Name, s.Addr, s.HealthPort)
	}
	return b.String()
}

// haDuration formats d for HAProxy: whole seconds as "2s", else milliseconds.
func haDuration(d time.Duration) string {
	if d%time.Second == 0 {
		return fmt.Sprintf("%ds", d/time.Second)
	}
	return fmt.Sprintf("%dms", d.Milliseconds())
}

// runtime sends one command to HAProxy's runtime API socket and returns the
// answer.
func runtime(socket, command string) (string, error) {
	c, err := net.DialTimeout("unix", socket, 2*time.Second)
	if err != nil {
		return "", fmt.Errorf("HAProxy runtime API: %w", err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, command+"\n"); err != nil {
		return "", fmt.Errorf("HAProxy runtime API: %w", err)
	}
	out, err := io.ReadAll(c)
	if err != nil {
		return "", fmt.Errorf("HAProxy runtime API: %w", err)
	}
	return string(out), nil
}

// serverStatus parses `show stat` output into server name → status ("UP",
// "DOWN", "MAINT", "UP 1/2", …) for the servers of backend.
func serverStatus(stat, backend string) (map[string]string, error) {
	r := csv.NewReader(strings.NewReader(strings.TrimPrefix(stat, "# ")))
	r.FieldsPerRecord = -1
	rows, err := r.ReadAll()
	if err != nil || len(rows) == 0 {
		return nil, fmt.Errorf("HAProxy show stat: %q: %v", stat, err)
	}
	px, sv, st := slices.Index(rows[0], "pxname"), slices.Index(rows[0], "svname"), slices.Index(rows[0], "status")
	if px < 0 || sv < 0 || st < 0 {
		return nil, fmt.Errorf("HAProxy show stat: no pxname/svname/status columns in %q", rows[0])
	}
	out := map[string]string{}
	for _, row := range rows[1:] {
		if len(row) > st && row[px] == backend && row[sv] != "BACKEND" && row[sv] != "FRONTEND" {
			out[row[sv]] = row[st]
		}
	}
	return out, nil
}
