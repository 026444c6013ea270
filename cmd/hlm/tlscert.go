package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"os"
	"strings"
	"time"
)

func init() {
	register("tls-cert", "make a self-signed TLS certificate and key for hlm serve", runTLSCert)
}

func runTLSCert(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("tls-cert", "[--host NAMES] [--cert cert.pem --key key.pem] [--days N]", `
Write a self-signed ECDSA P-256 certificate valid for the given host names
and IP addresses, and its private key (mode 0600). Give the certificate to
devices with hlm edge --tls-ca cert.pem.`, stderr)
	hosts := fs.String("host", "localhost,127.0.0.1", "comma-separated DNS names and IP addresses")
	certPath := fs.String("cert", "cert.pem", "certificate file to write")
	keyPath := fs.String("key", "key.pem", "private key file to write")
	days := fs.Int("days", 365, "validity in days")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *days < 1 {
		return usageError{errors.New("--days must be at least 1")}
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{Organization: []string{"hlm"}, CommonName: "hlm serve"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Duration(*days) * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	for _, h := range strings.Split(*hosts, ",") {
		h = strings.TrimSpace(h)
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else if h != "" {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return err
	}
	kb, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return err
	}
	if err := os.WriteFile(*certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(*keyPath, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "hlm tls-cert: wrote %s and %s for %s, valid %d days\n", *certPath, *keyPath, *hosts, *days)
	return nil
}
