package transport

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"math/big"
	"net"
	"time"
)

// MaxCertificateValidity is the longest validity a certificate served by
// hash may have: browsers accept a certificate through WebTransport's
// serverCertificateHashes only when it is valid for at most two weeks (and
// its key is ECDSA P-256; Chromium also accepts no RSA key there).
const MaxCertificateValidity = 14 * 24 * time.Hour

// SelfSigned is a self-signed certificate for WebTransport in development
// (or for servers without a name in the Web PKI): the browser is told its
// SHA-256 hash (serverCertificateHashes) instead of checking it against a
// certificate authority.
type SelfSigned struct {
	Certificate tls.Certificate
	// Hash is the SHA-256 of the certificate's DER: what the page passes
	// to new WebTransport(url, {serverCertificateHashes: [{algorithm:
	// "sha-256", value: hash}]}).
	Hash     [32]byte
	NotAfter time.Time
}

// NewSelfSigned makes a certificate for hosts (names or IP addresses),
// with an ECDSA P-256 key, valid from a minute ago for validity (at most
// MaxCertificateValidity; 0 means 10 days). A server that runs longer than
// its validity must make a new one and give browsers the new hash.
func NewSelfSigned(hosts []string, validity time.Duration) (*SelfSigned, error) {
	if validity == 0 {
		validity = 10 * 24 * time.Hour
	}
	if validity < 0 || validity > MaxCertificateValidity {
		return nil, fmt.Errorf("transport: a certificate served by hash is valid for at most %v, not %v", MaxCertificateValidity, validity)
	}
	if len(hosts) == 0 {
		return nil, errors.New("transport: a certificate needs at least one host")
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, err
	}
	// The whole span NotBefore..NotAfter counts against the limit, so the
	// minute of slack for clocks comes out of validity.
	notBefore := time.Now().Add(-time.Minute).Truncate(time.Second)
	tmpl := x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: hosts[0]},
		NotBefore:             notBefore,
		NotAfter:              notBefore.Add(validity),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, &tmpl, &tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	return &SelfSigned{
		Certificate: tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key},
		Hash:        sha256.Sum256(der),
		NotAfter:    tmpl.NotAfter,
	}, nil
}
