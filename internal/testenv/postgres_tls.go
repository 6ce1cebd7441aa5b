package testenv

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// TLSFiles are the PEM files of a server started with EnableTLS: a
// throwaway CA, generated in Go, signed the server's certificate (for the
// DNS name "localhost" only, so verify-full to 127.0.0.1 fails on the name)
// and a client certificate whose CN is the superuser "postgres".
type TLSFiles struct {
	CACert             string // the CA's certificate
	ClientCert         string // CN=postgres, signed by the CA
	ClientKey          string // ClientCert's key, unencrypted (PKCS#8)
	ClientKeyEncrypted string // the same key, PEM-encrypted (AES-256) with ClientKeyPassword
	ClientKeyPassword  string
}

// EnableTLS turns ssl on with a fresh CA and server certificate and makes
// pg_hba.conf accept only TLS connections (hostssl; a plain TCP connection
// is refused with "no pg_hba.conf entry"), for normal and replication
// connections. With clientCert, the hba method is cert: the client must
// present a certificate signed by the CA whose CN is the user. The server
// is restarted; DSN then asks for TLS (and the client certificate).
func (pg *Postgres) EnableTLS(ctx context.Context, clientCert bool) (*TLSFiles, error) {
	data := filepath.Join(pg.Dir, "data")
	dir := filepath.Join(pg.Dir, "tls")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	now := time.Now()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "connectd test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("testenv: CA certificate: %w", err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	issue := func(serial int64, cn string, dns []string, usage x509.ExtKeyUsage) ([]byte, []byte, error) {
		key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: cn}, DNSNames: dns,
			NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), KeyUsage: x509.KeyUsageDigitalSignature,
			ExtKeyUsage: []x509.ExtKeyUsage{usage}}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			return nil, nil, err
		}
		k, _ := x509.MarshalPKCS8PrivateKey(key)
		return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), k, nil
	}
	srvCert, srvKey, err := issue(2, "localhost", []string{"localhost"}, x509.ExtKeyUsageServerAuth)
	if err != nil {
		return nil, fmt.Errorf("testenv: server certificate: %w", err)
	}
	cliCert, cliKey, err := issue(3, pg.User, nil, x509.ExtKeyUsageClientAuth)
	if err != nil {
		return nil, fmt.Errorf("testenv: client certificate: %w", err)
	}
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	f := &TLSFiles{CACert: filepath.Join(dir, "ca.crt"), ClientCert: filepath.Join(dir, "client.crt"), ClientKey: filepath.Join(dir, "client.key"),
		ClientKeyEncrypted: filepath.Join(dir, "client-encrypted.key"), ClientKeyPassword: "s3cret-key-pass"}
	//lint:ignore SA1019 legacy PEM encryption is what libpq and pgx read with sslpassword.
	enc, err := x509.EncryptPEMBlock(rand.Reader, "PRIVATE KEY", cliKey, []byte(f.ClientKeyPassword), x509.PEMCipherAES256) //nolint:staticcheck
	if err != nil {
		return nil, fmt.Errorf("testenv: encrypt client key: %w", err)
	}
	for path, b := range map[string][]byte{
		f.CACert: caPEM, f.ClientCert: cliCert, f.ClientKey: pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: cliKey}),
		f.ClientKeyEncrypted:              pem.EncodeToMemory(enc),
		filepath.Join(data, "server.crt"): srvCert, filepath.Join(data, "server.key"): pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: srvKey}),
		filepath.Join(data, "root.crt"): caPEM,
	} {
		if err := os.WriteFile(path, b, 0o600); err != nil {
			return nil, err
		}
	}
	method := "trust"
	if clientCert {
		method = "cert"
	}
	hba := fmt.Sprintf("local all all trust\nlocal replication all trust\nhostssl all all 127.0.0.1/32 %[1]s\nhostssl replication all 127.0.0.1/32 %[1]s\n", method)
	if err := os.WriteFile(filepath.Join(data, "pg_hba.conf"), []byte(hba), 0o600); err != nil {
		return nil, err
	}
	if err := appendFile(filepath.Join(data, "postgresql.auto.conf"), "\nssl = on\nssl_cert_file = 'server.crt'\nssl_key_file = 'server.key'\nssl_ca_file = 'root.crt'\n"); err != nil {
		return nil, err
	}
	if pg.runAs != "" {
		exec.Command("chown", "-R", pg.runAs+":", data).Run()
	}
	if err := pg.Restart(ctx); err != nil {
		return nil, err
	}
	pg.tls = f
	return f, nil
}

// dsnTLS is DSN's TLS query string: sslmode=disable without EnableTLS.
func (pg *Postgres) dsnTLS() string {
	if pg.tls == nil {
		return "sslmode=disable"
	}
	q := url.Values{"sslmode": {"verify-ca"}, "sslrootcert": {pg.tls.CACert}, "sslcert": {pg.tls.ClientCert}, "sslkey": {pg.tls.ClientKey}}
	return q.Encode()
}
