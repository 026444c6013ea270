package main

import (
	"bytes"
	"context"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestDeployDocFlags: every flag docs/deploy.md passes to hlm serve in the
// Kubernetes manifest and in the replica's command line is one hlm serve
// has.
func TestDeployDocFlags(t *testing.T) {
	doc, err := os.ReadFile("../../docs/deploy.md")
	if err != nil {
		t.Fatal(err)
	}
	var help bytes.Buffer
	run(context.Background(), []string{"serve", "--help"}, &help, &help)
	_, yaml, _ := strings.Cut(string(doc), "```yaml\n")
	yaml, _, _ = strings.Cut(yaml, "```")
	_, replica, _ := strings.Cut(string(doc), "./hlm serve --listen 0.0.0.0:7140 --health")
	replica, _, _ = strings.Cut(replica, "```")
	flags := regexp.MustCompile(`--([a-z][a-z-]*)`).FindAllStringSubmatch(yaml+" --health "+replica, -1)
	if len(flags) < 8 {
		t.Fatalf("found only %d flags in the manifest and the replica's command", len(flags))
	}
	for _, f := range flags {
		if !regexp.MustCompile(`(?m)^  -` + f[1] + `\b`).MatchString(help.String()) {
			t.Errorf("docs/deploy.md passes --%s, which hlm serve does not have", f[1])
		}
	}
}
