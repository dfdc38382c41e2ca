package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Files written by `certs` into --dir. The other subcommands read them by these names.
const (
	fileCACert       = "ca.crt"
	fileCAKey        = "ca.key"
	fileServingCert  = "apiserver.crt"
	fileServingKey   = "apiserver.key"
	fileSAKey        = "sa.key"
	fileSAPub        = "sa.pub"
	fileTokens       = "tokens.csv"
	fileAdminToken   = "admin.token"
	fileAdminKubecfg = "admin.kubeconfig"
	fileCMKubecfg    = "controller-manager.kubeconfig"
	fileSimKubecfg   = "simulator.kubeconfig"
)

// clientIdentity is a client certificate identity; all are in system:masters
// so that RBAC never gets in the way of the control plane's own components.
type clientIdentity struct {
	file string // basename for .crt/.key/.kubeconfig
	cn   string
}

var clientIdentities = []clientIdentity{
	{"admin", "admin"},
	{"controller-manager", "system:kube-controller-manager"},
	{"simulator", "converge:simulator"},
}

func runCerts(args []string) error {
	fs := flag.NewFlagSet("certs", flag.ContinueOnError)
	dir := fs.String("dir", "", "directory to write certificates, keys and kubeconfigs into; its parent must exist (required)")
	server := fs.String("server", "", "API server URL written into the kubeconfigs, e.g. https://127.0.0.1:6443 (required)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dir == "" || *server == "" {
		return fmt.Errorf("--dir and --server are required")
	}
	return writeCerts(*dir, *server)
}

// writeCerts is idempotent: existing keys and certificates are kept (so an API
// server restarted on the same directory keeps its identity); kubeconfigs are
// always rewritten for the given server URL.
func writeCerts(dir, server string) error {
	// Only the folder itself: its parent must exist. A state folder removed while this runs
	// (its launcher stopped) is not made again around the keys.
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("%w (the folder --dir names is made, but its parent must exist)", err)
	}
	p := func(name string) string { return filepath.Join(dir, name) }

	if !exists(p(fileCACert)) {
		caKey, err := newKey()
		if err != nil {
			return err
		}
		now := time.Now()
		caTmpl := &x509.Certificate{
			SerialNumber:          serial(),
			Subject:               pkix.Name{CommonName: "converge-local-ca"},
			NotBefore:             now.Add(-time.Hour),
			NotAfter:              now.Add(10 * 365 * 24 * time.Hour),
			KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
			BasicConstraintsValid: true,
			IsCA:                  true,
		}
		caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
		if err != nil {
			return err
		}
		caCert, _ := x509.ParseCertificate(caDER)

		// Serving certificate.
		if err := issue(dir, "apiserver", caCert, caKey, &x509.Certificate{
			Subject:     pkix.Name{CommonName: "kube-apiserver"},
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
			DNSNames: []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc",
				"kubernetes.default.svc.cluster.local"},
			IPAddresses: []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("10.0.0.1")},
		}); err != nil {
			return err
		}
		// Client certificates.
		for _, id := range clientIdentities {
			if err := issue(dir, id.file, caCert, caKey, &x509.Certificate{
				Subject:     pkix.Name{CommonName: id.cn, Organization: []string{"system:masters"}},
				ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
			}); err != nil {
				return err
			}
		}
		// Service-account signing key pair.
		saKey, err := newKey()
		if err != nil {
			return err
		}
		if err := writeKey(p(fileSAKey), saKey); err != nil {
			return err
		}
		pubDER, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
		if err != nil {
			return err
		}
		if err := writePEM(p(fileSAPub), "PUBLIC KEY", pubDER, 0o644); err != nil {
			return err
		}
		// Static admin token (an alternative to the client certificate).
		tok := make([]byte, 24)
		if _, err := rand.Read(tok); err != nil {
			return err
		}
		token := hex.EncodeToString(tok)
		if err := os.WriteFile(p(fileAdminToken), []byte(token), 0o600); err != nil {
			return err
		}
		if err := os.WriteFile(p(fileTokens), []byte(fmt.Sprintf("%s,admin,admin,\"system:masters\"\n", token)), 0o600); err != nil {
			return err
		}
		// CA last: its presence marks a complete set.
		if err := writeKey(p(fileCAKey), caKey); err != nil {
			return err
		}
		if err := writePEM(p(fileCACert), "CERTIFICATE", caDER, 0o644); err != nil {
			return err
		}
	}

	caPEM, err := os.ReadFile(p(fileCACert))
	if err != nil {
		return err
	}
	for _, id := range clientIdentities {
		crt, err := os.ReadFile(p(id.file + ".crt"))
		if err != nil {
			return err
		}
		key, err := os.ReadFile(p(id.file + ".key"))
		if err != nil {
			return err
		}
		cfg := clientcmdapi.NewConfig()
		cfg.Clusters["converge"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: caPEM}
		cfg.AuthInfos[id.file] = &clientcmdapi.AuthInfo{ClientCertificateData: crt, ClientKeyData: key}
		cfg.Contexts["converge"] = &clientcmdapi.Context{Cluster: "converge", AuthInfo: id.file, Namespace: "default"}
		cfg.CurrentContext = "converge"
		if err := clientcmd.WriteToFile(*cfg, p(id.file+".kubeconfig")); err != nil {
			return err
		}
	}
	return nil
}

func issue(dir, name string, ca *x509.Certificate, caKey *ecdsa.PrivateKey, tmpl *x509.Certificate) error {
	key, err := newKey()
	if err != nil {
		return err
	}
	now := time.Now()
	tmpl.SerialNumber = serial()
	tmpl.NotBefore = now.Add(-time.Hour)
	tmpl.NotAfter = now.Add(2 * 365 * 24 * time.Hour)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return err
	}
	if err := writeKey(filepath.Join(dir, name+".key"), key); err != nil {
		return err
	}
	return writePEM(filepath.Join(dir, name+".crt"), "CERTIFICATE", der, 0o644)
}

func newKey() (*ecdsa.PrivateKey, error) { return ecdsa.GenerateKey(elliptic.P256(), rand.Reader) }

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	return n
}

func writeKey(path string, key *ecdsa.PrivateKey) error {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	return writePEM(path, "EC PRIVATE KEY", der, 0o600)
}

func writePEM(path, typ string, der []byte, mode os.FileMode) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), mode)
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
