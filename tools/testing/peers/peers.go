// Package peers installs, waits for and removes the programs of other
// projects that the end-to-end specs and the benchmarks run next to ours:
// Kueue and Kubeflow Trainer, real clients of our JobSets, and community
// JobSet, which replaces ours on a cluster and is replaced by it.
//
// tools/peers/{kueue,trainer,jobset}.sh build a peer from the Go module
// proxy into a directory of its own: its binaries, its image tars and
// NAME.kustomize.yaml, kustomize's rendering of the module's own
// configuration with our image. Load reads that rendering and fits it to
// our clusters (no image is pulled; no part that cannot run here; the
// settings the specs rely on, checked); Install applies it with
// server-side apply (images/manifest) and waits until the peer
// serves: every CustomResourceDefinition established, every Deployment
// rolled out as `kubectl rollout status` judges it, and its webhook
// admitting an object (a server-side dry run). The images must be on the
// cluster's nodes already: tools/e2e.sh imports them into the local
// cluster.
//
// The specs learn which peers were built from JOBSET_PEERS (Env), a list
// of build directories that tools/e2e.sh sets for the peers a run asks
// for; a spec whose peer is not listed skips.
package peers

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fastjobset/jobset/images/manifest"
)

// Env names the environment variable that lists the build directories of
// the peers a run may install, separated as PATH is (tools/e2e.sh sets it).
const Env = "JOBSET_PEERS"

// FieldManager owns the fields that Install, Configure and SwitchJobSet
// write.
const FieldManager = "jobset-peers"

// Peer describes a peer: where it runs, what Install waits for, and how its
// build's manifests are fitted to our clusters.
type Peer struct {
	// Name names the peer in messages and its build's manifests,
	// Name.kustomize.yaml.
	Name string
	// Namespace holds its Deployments and its Configuration.
	Namespace string
	// Deployments are the Deployments that must roll out before it serves.
	Deployments []string

	// rollout bounds the wait for each Deployment.
	rollout time.Duration
	// probe returns a new object that the peer's webhook must admit (a
	// server-side dry run) before the peer counts as serving; it is tried
	// probeAttempts times, probeInterval apart.
	probe         func() *unstructured.Unstructured
	probeAttempts int
	probeInterval time.Duration
	// config is where the peer's Configuration file lives, if it has one.
	config *configFile
	// render fits the manifests of the build to our clusters; nil for
	// manifests that need nothing.
	render func(*Peer, []*unstructured.Unstructured) ([]*unstructured.Unstructured, error)
	// beforeLeaving is what must happen before SwitchJobSet removes the
	// peer while it runs; nil for nothing.
	beforeLeaving func(ctx context.Context, cl Cluster, namespace string) error
	// featureGates are the gates WithFeatureGates turned on, and
	// enableGates writes them into the manifests, where the peer reads
	// them (nil: the peer has none to turn on).
	featureGates []string
	enableGates  func(*Peer, []*unstructured.Unstructured) error
	// tls is the TLS policy WithTLS set, and setTLS writes it into the
	// manifests, where the peer reads it (nil: the peer has none).
	tls    *TLS
	setTLS func(*Peer, []*unstructured.Unstructured) error
}

// WithFeatureGates returns p with the feature gates turned on as well, in
// the manifests that Load and LoadFile return: a user's way of turning on
// an alpha feature of community JobSet's (its Configuration) or ours
// (--feature-gates), for the specs that run one feature on both sides.
// The copy is the same peer to Find, SwitchJobSet and Install.
func (p *Peer) WithFeatureGates(gates ...string) *Peer {
	q := *p
	q.featureGates = append(slices.Clone(p.featureGates), gates...)
	return &q
}

// TLS is a TLS policy of the TLSOptions feature gate (beta, on by default
// on either side) for a JobSet controller's servers, admission and
// metrics: the minimum protocol version and the TLS 1.2 cipher suites, by
// the names of Go's crypto/tls constants, which both sides take
// ("VersionTLS13", "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384"). An empty
// field is left unset.
type TLS struct {
	MinVersion   string
	CipherSuites []string
}

// String is the policy as one line: "minVersion=VersionTLS12
// cipherSuites=A,B".
func (t TLS) String() string {
	var parts []string
	if t.MinVersion != "" {
		parts = append(parts, "minVersion="+t.MinVersion)
	}
	if len(t.CipherSuites) > 0 {
		parts = append(parts, "cipherSuites="+strings.Join(t.CipherSuites, ","))
	}
	return strings.Join(parts, " ")
}

// WithTLS returns p with the TLS policy set as well, in the manifests that
// Load and LoadFile return, as a user sets it: community JobSet's in the
// tls field of its Configuration, ours with --tls-min-version and
// --tls-cipher-suites on the controller and the webhook. The copy is the
// same peer to Find, SwitchJobSet and Install.
func (p *Peer) WithTLS(t TLS) *Peer {
	q := *p
	t.CipherSuites = slices.Clone(t.CipherSuites)
	q.tls = &t
	return &q
}

// manifests is the name of the peer's manifests in its build directory.
func (p *Peer) manifests() string { return p.Name + ".kustomize.yaml" }

// Manifests are a peer's objects as Install applies them.
type Manifests struct {
	Peer    *Peer
	Objects []*unstructured.Unstructured
}

// built are the peers that tools/peers builds, which Find tells apart.
var built = []*Peer{Kueue, Trainer, CommunityJobSet}

// Find returns p's build directory: the directory listed in JOBSET_PEERS
// that holds p's manifests, or "" when none does (the run did not ask for
// p). A listed directory that holds no peer's manifests is an error, not
// a reason to skip.
func Find(p *Peer) (string, error) {
	var found string
	for _, dir := range filepath.SplitList(os.Getenv(Env)) {
		if dir == "" {
			continue
		}
		var holds []string
		for _, b := range built {
			if _, err := os.Stat(filepath.Join(dir, b.manifests())); err == nil {
				holds = append(holds, b.Name)
				if b.Name == p.Name && found == "" {
					found = dir
				}
			}
		}
		if len(holds) != 1 {
			return "", fmt.Errorf("%s lists %s, which holds the manifests of %d peers (%v), want 1: list the directories tools/peers/*.sh print", Env, dir, len(holds), holds)
		}
	}
	return found, nil
}

// Load reads the manifests that p's build left in dir and fits them to our
// clusters.
func Load(p *Peer, dir string) (*Manifests, error) {
	if dir == "" {
		return nil, errors.New("no build directory for " + p.Name)
	}
	m, err := load(p, filepath.Join(dir, p.manifests()), true)
	if err != nil {
		return nil, fmt.Errorf("%s in %s: %w", p.Name, dir, err)
	}
	return m, nil
}

// LoadFile reads p's manifests from the file at path as they are, but for
// the feature gates of WithFeatureGates and the TLS policy of WithTLS: for
// ours, whose install.yaml needs no fitting.
func LoadFile(p *Peer, path string) (*Manifests, error) {
	m, err := load(p, path, false)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

func load(p *Peer, path string, render bool) (*Manifests, error) {
	objs, err := manifest.Read(path)
	if err != nil {
		return nil, err
	}
	if render && p.render != nil {
		if objs, err = p.render(p, objs); err != nil {
			return nil, err
		}
	}
	switch {
	case p.enableGates != nil:
		if err := p.enableGates(p, objs); err != nil {
			return nil, err
		}
	case len(p.featureGates) > 0:
		return nil, fmt.Errorf("%s has no feature gates to turn on (%s)", p.Name, strings.Join(p.featureGates, ", "))
	}
	if p.tls != nil {
		if p.setTLS == nil {
			return nil, fmt.Errorf("%s has no TLS policy to set (%s)", p.Name, p.tls)
		}
		if err := p.setTLS(p, objs); err != nil {
			return nil, err
		}
	}
	m := &Manifests{Peer: p, Objects: objs}
	if err := m.check(); err != nil {
		return nil, err
	}
	return m, nil
}

// check verifies that the manifests hold what Install waits for.
func (m *Manifests) check() error {
	for _, name := range m.Peer.Deployments {
		if find(m.Objects, "Deployment", m.Peer.Namespace, name) == nil {
			return fmt.Errorf("no Deployment %s/%s, which %s runs in", m.Peer.Namespace, name, m.Peer.Name)
		}
	}
	return nil
}

// find returns the object of that kind, namespace and name, or nil.
func find(objs []*unstructured.Unstructured, kind, namespace, name string) *unstructured.Unstructured {
	for _, u := range objs {
		if u.GetKind() == kind && u.GetNamespace() == namespace && u.GetName() == name {
			return u
		}
	}
	return nil
}

// without returns the objects of objs of none of the kinds.
func without(objs []*unstructured.Unstructured, kinds ...string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, u := range objs {
		keep := true
		for _, k := range kinds {
			keep = keep && u.GetKind() != k
		}
		if keep {
			out = append(out, u)
		}
	}
	return out
}

// only returns the objects of objs of that kind.
func only(objs []*unstructured.Unstructured, kind string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, u := range objs {
		if u.GetKind() == kind {
			out = append(out, u)
		}
	}
	return out
}
