package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"os"
	"strings"
	"time"

	"github.com/hlmproject/hlm/internal/atomicfile"
)

func init() {
	register("tls-cert", "make a self-signed TLS certificate and key for hlm serve", runTLSCert)
}

// maxCertDays is the longest validity hlm tls-cert writes: 100 years.
const maxCertDays = 36500

func runTLSCert(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("tls-cert", "[--host NAMES] [--cert cert.pem --key key.pem] [--days N]", `
Write a self-signed ECDSA P-256 certificate valid for the given host names
and IP addresses, and its private key (mode 0600). Give the certificate to
devices with hlm edge --tls-ca cert.pem. Files that exist are not replaced
unless --force is given: the devices that trust the old certificate would
refuse the new one.`, stdout)
	hosts := fs.String("host", "localhost,127.0.0.1", "comma-separated DNS names and IP addresses (at least one)")
	certPath := fs.String("cert", "cert.pem", "certificate file to write")
	keyPath := fs.String("key", "key.pem", "private key file to write")
	days := fs.Int("days", 365, fmt.Sprintf("validity in days, 1 to %d", maxCertDays))
	force := fs.Bool("force", false, "replace --cert and --key if they exist (a renewal: give the new certificate to the devices)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if !*force {
		for _, f := range []struct{ flag, path string }{{"--cert", *certPath}, {"--key", *keyPath}} {
			if _, err := os.Stat(f.path); err == nil {
				return usageError{fmt.Errorf("%s %s exists: devices that trust it would refuse a new one; --force replaces it, or write elsewhere", f.flag, f.path)}
			}
		}
	}
	if *days < 1 || *days > maxCertDays {
		return usageError{fmt.Errorf("--days %d: want 1 to %d (100 years)", *days, maxCertDays)}
	}
	names := hostList(*hosts)
	if len(names) == 0 {
		return usageError{fmt.Errorf("--host %q names no host: clients refuse a certificate valid for none; give the DNS names and IP addresses they connect to, e.g. --host server.example.org,10.0.0.5", *hosts)}
	}
	now := time.Now()
	certPEM, keyPEM, err := selfSigned(names, now.Add(-time.Hour), now.AddDate(0, 0, *days))
	if err != nil {
		return err
	}
	if err := writePrivate(*keyPath, keyPEM); err != nil {
		return err
	}
	if err := atomicfile.Write(*certPath, func(w io.Writer) error { _, err := w.Write(certPEM); return err }); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "hlm tls-cert: wrote %s and %s for %s, valid %d days (until %s)\n", *certPath, *keyPath, strings.Join(names, ","), *days, now.AddDate(0, 0, *days).Format(time.DateOnly))
	return nil
}

// hostList splits a comma-separated --host value, dropping blanks.
func hostList(s string) []string {
	var names []string
	for _, h := range strings.Split(s, ",") {
		if h = strings.TrimSpace(h); h != "" {
			names = append(names, h)
		}
	}
	return names
}

// selfSigned makes a self-signed ECDSA P-256 certificate for hosts (DNS
// names and IP addresses), valid from notBefore to notAfter, and its
// private key, both PEM-encoded.
func selfSigned(hosts []string, notBefore, notAfter time.Time) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{Organization: []string{"hlm"}, CommonName: "hlm serve"},
		NotBefore:             notBefore,
		NotAfter:              notAfter,
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	kb, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kb}), nil
}

// writePrivate writes data to path readable by its owner only (0600),
// also when path existed with a wider mode (atomicfile.WriteMode).
func writePrivate(path string, data []byte) error {
	return atomicfile.WriteMode(path, 0o600, func(w io.Writer) error { _, err := w.Write(data); return err })
}
