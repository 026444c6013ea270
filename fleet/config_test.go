package fleet

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// docConfig is the configuration docs/deploy.md shows.
var docConfig = HAProxyConfig{Bind: "0.0.0.0:7140", Balance: "roundrobin", Check: time.Second, Fall: 2, Socket: "/run/haproxy/hlm.sock",
	Backends: []Backend{{"r0", "10.0.0.11:7140", 9141}, {"r1", "10.0.0.12:7140", 9141}, {"r2", "10.0.0.13:7140", 9141}}}

// TestDeployDocConfig: the HAProxy configuration in docs/deploy.md is the
// one this package renders (the one the deployment test runs), and HAProxy
// accepts it and its affinity variant (where HAProxy is installed).
func TestDeployDocConfig(t *testing.T) {
	doc, err := os.ReadFile("../docs/deploy.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(doc), "```haproxy\n")
	block, _, ok2 := strings.Cut(block, "```")
	if !ok || !ok2 {
		t.Fatal("docs/deploy.md has no ```haproxy block")
	}
	if want := docConfig.String(); block != want {
		t.Errorf("docs/deploy.md's HAProxy configuration differs from HAProxyConfig.String():\n--- doc\n%s\n--- rendered\n%s", block, want)
	}
	bin, err := exec.LookPath("haproxy")
	if err != nil {
		t.Log("haproxy not installed: configuration not checked with haproxy -c")
		return
	}
	for _, balance := range Balances {
		c := docConfig
		c.Balance, c.Socket = balance, filepath.Join(t.TempDir(), "s")
		f := filepath.Join(t.TempDir(), "haproxy.cfg")
		os.WriteFile(f, []byte(c.String()), 0o644)
		if out, err := exec.Command(bin, "-c", "-f", f).CombinedOutput(); err != nil {
			t.Errorf("haproxy -c (%s): %v\n%s", balance, err, out)
		}
	}
}

func TestServerStatus(t *testing.T) {
	stat := "# pxname,svname,qcur,status,weight\nhlm,FRONTEND,,OPEN,\nreplicas,r0,0,UP,1\nreplicas,r1,0,DOWN,1\nreplicas,r2,0,UP 1/2,1\nreplicas,BACKEND,0,UP,2\n\n"
	st, err := serverStatus(stat, "replicas")
	if err != nil {
		t.Fatal(err)
	}
	if len(st) != 3 || st["r0"] != "UP" || st["r1"] != "DOWN" || st["r2"] != "UP 1/2" {
		t.Errorf("%v", st)
	}
	if _, err := serverStatus("garbage", "replicas"); err == nil {
		t.Error("no error for output without the columns")
	}
}
