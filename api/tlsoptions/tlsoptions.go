// Package tlsoptions is the TLS policy of the controller's and the
// webhook's servers (admission and metrics): the minimum protocol version
// and the TLS 1.2 cipher suites, set by --tls-min-version and
// --tls-cipher-suites under the TLSOptions feature gate. The values are
// community JobSet's (its configuration's tls.minVersion and
// tls.cipherSuites): Go's crypto/tls constant names.
package tlsoptions

import (
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"slices"
	"strings"

	"github.com/fastjobset/jobset/api/features"
)

// The flags' names.
const (
	MinVersionFlag   = "tls-min-version"
	CipherSuitesFlag = "tls-cipher-suites"
)

// Options are the flags' values, unparsed.
type Options struct {
	// MinVersion is VersionTLS12 or VersionTLS13; empty means TLS 1.2.
	MinVersion string
	// CipherSuites are TLS 1.2 suites by their Go names; empty means Go's
	// defaults.
	CipherSuites []string
}

// BindFlags adds the flags to fs.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.MinVersion, MinVersionFlag, "",
		"Minimum TLS version of the webhook and metrics servers: VersionTLS12 (the default) or VersionTLS13. Needs the TLSOptions feature gate (on by default).")
	fs.Func(CipherSuitesFlag,
		"TLS 1.2 cipher suites the webhook and metrics servers allow, comma-separated Go names such as TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 (default: Go's). Not with --tls-min-version=VersionTLS13, whose suites Go fixes. Needs the TLSOptions feature gate.",
		func(v string) error {
			for _, name := range strings.Split(v, ",") {
				if name = strings.TrimSpace(name); name != "" {
					o.CipherSuites = append(o.CipherSuites, name)
				}
			}
			return nil
		})
}

// versions are the minimum versions a server may require.
var versions = map[string]uint16{"VersionTLS12": tls.VersionTLS12, "VersionTLS13": tls.VersionTLS13}

// ServerConfig returns what each server applies to its tls.Config, or an
// error that names the flag at fault and the fix. With the TLSOptions gate
// off the flags must be unset, as they would have no effect.
func (o Options) ServerConfig(gates features.Gates) (func(*tls.Config), error) {
	if !gates.Enabled(features.TLSOptions) {
		if o.MinVersion != "" || len(o.CipherSuites) > 0 {
			return nil, fmt.Errorf("--%s and --%s need the TLSOptions feature gate: remove them, or TLSOptions=false from --feature-gates", MinVersionFlag, CipherSuitesFlag)
		}
		return func(*tls.Config) {}, nil
	}
	var errs []error
	minVersion := uint16(tls.VersionTLS12)
	if o.MinVersion != "" {
		v, ok := versions[o.MinVersion]
		switch {
		case ok:
			minVersion = v
		case o.MinVersion == "VersionTLS10" || o.MinVersion == "VersionTLS11":
			errs = append(errs, fmt.Errorf("--%s=%s: TLS 1.0 and 1.1 are insecure and not allowed; use VersionTLS12 or VersionTLS13", MinVersionFlag, o.MinVersion))
		default:
			errs = append(errs, fmt.Errorf("--%s=%q: not a TLS version; use VersionTLS12 or VersionTLS13", MinVersionFlag, o.MinVersion))
		}
	}
	suites, err := cipherSuites(o.CipherSuites)
	if err != nil {
		errs = append(errs, err)
	}
	if minVersion == tls.VersionTLS13 && len(o.CipherSuites) > 0 {
		errs = append(errs, fmt.Errorf("--%s may not be set with --%s=VersionTLS13: Go fixes the TLS 1.3 suites; leave it out, or require VersionTLS12", CipherSuitesFlag, MinVersionFlag))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return func(c *tls.Config) {
		c.MinVersion = minVersion
		if len(suites) > 0 {
			c.CipherSuites = suites
		}
	}, nil
}

// cipherSuites looks the names up among the suites Go implements for
// TLS 1.2, the insecure ones included as community accepts them.
func cipherSuites(names []string) ([]uint16, error) {
	byName := map[string]*tls.CipherSuite{}
	for _, s := range append(tls.CipherSuites(), tls.InsecureCipherSuites()...) {
		byName[s.Name] = s
	}
	// The names Go's constants had before they said SHA256, which
	// community JobSet accepts as crypto/tls still defines them.
	byName["TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305"] = byName["TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256"]
	byName["TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305"] = byName["TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256"]
	var ids []uint16
	var unknown, tls13 []string
	for _, name := range names {
		s, ok := byName[name]
		switch {
		case !ok:
			unknown = append(unknown, name)
		case !slices.Contains(s.SupportedVersions, tls.VersionTLS12):
			tls13 = append(tls13, name)
		default:
			ids = append(ids, s.ID)
		}
	}
	var errs []error
	if len(unknown) > 0 {
		errs = append(errs, fmt.Errorf("--%s: unknown cipher suites %s; use Go's names, for example %s", CipherSuitesFlag, strings.Join(unknown, ", "), strings.Join(preferred(), ",")))
	}
	if len(tls13) > 0 {
		errs = append(errs, fmt.Errorf("--%s: %s are TLS 1.3 suites, which Go fixes and does not let a server choose; list TLS 1.2 suites only", CipherSuitesFlag, strings.Join(tls13, ", ")))
	}
	return ids, errors.Join(errs...)
}

// preferred are the secure TLS 1.2 suites, an example for error messages.
func preferred() []string {
	var names []string
	for _, s := range tls.CipherSuites() {
		if slices.Contains(s.SupportedVersions, tls.VersionTLS12) {
			names = append(names, s.Name)
		}
	}
	return names
}
