package peers

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fastjobset/jobset/images/manifest"
)

// Small renderings of each peer, shaped as kustomize renders the real ones
// (the real ones: TestBuiltManifests).
const (
	kueueManifests = `apiVersion: v1
kind: Namespace
metadata:
  name: kueue-system
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: resourceflavors.kueue.x-k8s.io
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: kueue-manager-config
  namespace: kueue-system
data:
  controller_manager_config.yaml: |
    apiVersion: config.kueue.x-k8s.io/v1beta2
    kind: Configuration
    #internalCertManagement:
    #  enable: false
    integrations:
      frameworks:
      - "batch/job"
      - "jobset.x-k8s.io/jobset"
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: kueue-controller-manager
  namespace: kueue-system
spec:
  template:
    spec:
      containers:
      - name: manager
        image: localhost/kueue/kueue:v0.19.2
        imagePullPolicy: Always
---
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata:
  name: v1beta2.visibility.kueue.x-k8s.io
spec:
  group: visibility.kueue.x-k8s.io
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: kueue-validating-webhook-configuration
`
	trainerManifests = `apiVersion: v1
kind: Namespace
metadata:
  name: kubeflow-system
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: trainjobs.trainer.kubeflow.org
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: kubeflow-trainer-config
  namespace: kubeflow-system
data:
  controller_manager_config.yaml: |
    apiVersion: config.trainer.kubeflow.org/v1alpha1
    kind: Configuration
    certManagement:
      enable: true
      webhookServiceName: kubeflow-trainer-controller-manager
      webhookSecretName: kubeflow-trainer-webhook-cert
---
apiVersion: v1
kind: Secret
metadata:
  name: kubeflow-trainer-webhook-cert
  namespace: kubeflow-system
type: Opaque
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: kubeflow-trainer-controller-manager
  namespace: kubeflow-system
spec:
  template:
    spec:
      containers:
      - name: manager
        image: localhost/kubeflow/trainer-controller-manager:v2.3.0
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: validator.trainer.kubeflow.org
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: validator.trainer.kubeflow.org
`
	communityManifests = `apiVersion: v1
kind: Namespace
metadata:
  name: jobset-system
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: jobsets.jobset.x-k8s.io
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: jobset-manager-config
  namespace: jobset-system
data:
  controller_manager_config.yaml: |
    apiVersion: config.jobset.x-k8s.io/v1alpha1
    kind: Configuration
    leaderElection:
      leaderElect: true
    internalCertManagement:
      enable: true
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: jobset-controller-manager
  namespace: jobset-system
spec:
  template:
    spec:
      containers:
      - name: manager
        image: localhost/jobset-community/jobset:v0.12.0
`
)

// decode reads multi-document YAML as Load does.
func decode(t *testing.T, text string) []*unstructured.Unstructured {
	t.Helper()
	path := filepath.Join(t.TempDir(), "manifests.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	objs, err := manifest.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// build writes text as p's build would leave it, and returns the directory.
func build(t *testing.T, p *Peer, text string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, p.manifests()), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// edit returns text with each pair of old and new strings replaced, and
// fails when an old string is not in text (the test would test nothing).
func edit(t *testing.T, text string, pairs ...string) string {
	t.Helper()
	for i := 0; i < len(pairs); i += 2 {
		if !strings.Contains(text, pairs[i]) {
			t.Fatalf("the manifests have no %q to replace", pairs[i])
		}
		text = strings.ReplaceAll(text, pairs[i], pairs[i+1])
	}
	return text
}

func TestLoad(t *testing.T) {
	type tc struct {
		peer      *Peer
		manifests string
		// want is the rendering; wantErr, when set, a part of the error.
		want    string
		wantErr string
	}
	cases := map[string]func(t *testing.T) tc{
		"Kueue without its visibility APIService, pulling nothing": func(t *testing.T) tc {
			return tc{peer: Kueue, manifests: kueueManifests, want: edit(t, kueueManifests,
				"imagePullPolicy: Always", "imagePullPolicy: IfNotPresent",
				`---
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata:
  name: v1beta2.visibility.kueue.x-k8s.io
spec:
  group: visibility.kueue.x-k8s.io
`, "")}
		},
		"Kueue with an image the build did not make": func(t *testing.T) tc {
			return tc{peer: Kueue, manifests: edit(t, kueueManifests, "localhost/kueue/kueue", "registry.k8s.io/kueue/kueue"),
				wantErr: `container manager: image "registry.k8s.io/kueue/kueue:v0.19.2" is not one the build made`}
		},
		"Kueue without its JobSet integration": func(t *testing.T) tc {
			return tc{peer: Kueue, manifests: edit(t, kueueManifests, `      - "jobset.x-k8s.io/jobset"`+"\n", ""),
				wantErr: "integrations.frameworks lacks"}
		},
		"Kueue without its internal cert rotator": func(t *testing.T) tc {
			return tc{peer: Kueue, manifests: edit(t, kueueManifests, "#internalCertManagement:\n    #  enable: false", "internalCertManagement:\n      enable: false"),
				wantErr: "internalCertManagement.enable to false"}
		},
		"Kueue without its Configuration": func(t *testing.T) tc {
			return tc{peer: Kueue, manifests: edit(t, kueueManifests, "name: kueue-manager-config", "name: other"),
				wantErr: "no ConfigMap kueue-system/kueue-manager-config"}
		},
		"Kueue without its manager": func(t *testing.T) tc {
			return tc{peer: Kueue, manifests: edit(t, kueueManifests, "name: kueue-controller-manager", "name: other"),
				wantErr: "no Deployment kueue-system/kueue-controller-manager"}
		},
		"Trainer, pulling nothing": func(t *testing.T) tc {
			return tc{peer: Trainer, manifests: trainerManifests, want: edit(t, trainerManifests,
				"image: localhost/kubeflow/trainer-controller-manager:v2.3.0",
				"image: localhost/kubeflow/trainer-controller-manager:v2.3.0\n        imagePullPolicy: IfNotPresent")}
		},
		"Trainer with the community JobSet its overlay bundles": func(t *testing.T) tc {
			return tc{peer: Trainer, manifests: trainerManifests + `---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: jobset-controller-manager
  namespace: kubeflow-system
`, wantErr: "Deployment kubeflow-system/jobset-controller-manager is community JobSet's"}
		},
		"Trainer without its webhooks": func(t *testing.T) tc {
			return tc{peer: Trainer, manifests: edit(t, trainerManifests, "kind: MutatingWebhookConfiguration", "kind: ConfigMap"),
				wantErr: "no MutatingWebhookConfiguration"}
		},
		"Trainer without its internal cert rotator": func(t *testing.T) tc {
			return tc{peer: Trainer, manifests: edit(t, trainerManifests, "enable: true", "enable: false"),
				wantErr: "certManagement.enable"}
		},
		"Trainer without the Secret its cert rotator fills": func(t *testing.T) tc {
			return tc{peer: Trainer, manifests: edit(t, trainerManifests, "webhookSecretName: kubeflow-trainer-webhook-cert", "webhookSecretName: other"),
				wantErr: `no Secret kubeflow-system/"other"`}
		},
		"community JobSet with its InPlaceRestart gate on": func(t *testing.T) tc {
			return tc{peer: CommunityJobSet, manifests: communityManifests, want: edit(t, communityManifests,
				`    apiVersion: config.jobset.x-k8s.io/v1alpha1
    kind: Configuration
    leaderElection:
      leaderElect: true
    internalCertManagement:
      enable: true
`, `    apiVersion: config.jobset.x-k8s.io/v1alpha1
    kind: Configuration
    leaderElection:
      leaderElect: true
    internalCertManagement:
      enable: true
    featureGates:
      InPlaceRestart: true
`,
				"image: localhost/jobset-community/jobset:v0.12.0",
				"image: localhost/jobset-community/jobset:v0.12.0\n        imagePullPolicy: IfNotPresent")}
		},
		"community JobSet with the RestartJob gate on as well": func(t *testing.T) tc {
			return tc{peer: CommunityJobSet.WithFeatureGates("RestartJob"), manifests: communityManifests, want: edit(t, communityManifests,
				"    internalCertManagement:\n      enable: true\n",
				"    internalCertManagement:\n      enable: true\n    featureGates:\n      InPlaceRestart: true\n      RestartJob: true\n",
				"image: localhost/jobset-community/jobset:v0.12.0",
				"image: localhost/jobset-community/jobset:v0.12.0\n        imagePullPolicy: IfNotPresent")}
		},
		"community JobSet with a TLS policy in its Configuration, and on its Pod template": func(t *testing.T) tc {
			policy := TLS{MinVersion: "VersionTLS12", CipherSuites: []string{"TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384"}}
			return tc{peer: CommunityJobSet.WithFeatureGates("TLSOptions").WithTLS(policy), manifests: communityManifests, want: edit(t, communityManifests,
				"    internalCertManagement:\n      enable: true\n",
				`    internalCertManagement:
      enable: true
    featureGates:
      InPlaceRestart: true
      TLSOptions: true
    tls:
      cipherSuites:
      - TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384
      - TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384
      minVersion: VersionTLS12
`,
				"spec:\n  template:\n    spec:\n      containers:\n      - name: manager\n",
				"spec:\n  template:\n    metadata:\n      annotations:\n        jobset-peers/tls: minVersion=VersionTLS12 cipherSuites=TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384\n    spec:\n      containers:\n      - name: manager\n",
				"image: localhost/jobset-community/jobset:v0.12.0",
				"image: localhost/jobset-community/jobset:v0.12.0\n        imagePullPolicy: IfNotPresent")}
		},
		"community JobSet whose Configuration sets a TLS policy already": func(t *testing.T) tc {
			return tc{peer: CommunityJobSet.WithTLS(TLS{MinVersion: "VersionTLS13"}), manifests: edit(t, communityManifests, "    leaderElection:\n", "    tls:\n      minVersion: VersionTLS12\n    leaderElection:\n"),
				wantErr: "sets tls already"}
		},
		"Kueue has no TLS policy to set": func(t *testing.T) tc {
			return tc{peer: Kueue.WithTLS(TLS{MinVersion: "VersionTLS13"}), manifests: kueueManifests, wantErr: "kueue has no TLS policy to set (minVersion=VersionTLS13)"}
		},
		"Kueue has no feature gates to turn on": func(t *testing.T) tc {
			return tc{peer: Kueue.WithFeatureGates("Something"), manifests: kueueManifests, wantErr: "kueue has no feature gates to turn on (Something)"}
		},
		"community JobSet whose Configuration sets feature gates already": func(t *testing.T) tc {
			return tc{peer: CommunityJobSet, manifests: edit(t, communityManifests, "    leaderElection:\n", "    featureGates:\n      Other: true\n    leaderElection:\n"),
				wantErr: "sets featureGates already"}
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			tc := c(t)
			m, err := Load(tc.peer, build(t, tc.peer, tc.manifests))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Load: %v, want an error with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(decode(t, tc.want), m.Objects); diff != "" {
				t.Errorf("rendering (-want +got):\n%s", diff)
			}
		})
	}
}

// ourManifests is the part of install.yaml that our feature gates change.
const ourManifests = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: jobset-controller
  namespace: jobset-system
spec:
  template:
    spec:
      containers:
      - name: jobset-controller
        args:
        - --health-probe-bind-address=:8081
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: jobset-webhook
  namespace: jobset-system
spec:
  template:
    spec:
      containers:
      - name: jobset-webhook
        args:
        - --health-probe-bind-address=:8081
        - --feature-gates=TLSOptions=false
`

func TestLoadFileFeatureGates(t *testing.T) {
	cases := map[string]struct {
		peer      *Peer
		manifests string
		want      string
		wantErr   string
	}{
		"ours as install.yaml has it": {peer: OurJobSet, manifests: ourManifests, want: ourManifests},
		"ours with RestartJob and ElasticJobSet on, in the controller and the webhook, after the flags given": {
			peer: OurJobSet.WithFeatureGates("RestartJob", "ElasticJobSet"), manifests: ourManifests,
			want: edit(t, ourManifests,
				"      - name: jobset-controller\n        args:\n        - --health-probe-bind-address=:8081\n",
				"      - name: jobset-controller\n        args:\n        - --health-probe-bind-address=:8081\n        - --feature-gates=RestartJob=true,ElasticJobSet=true\n",
				"        - --feature-gates=TLSOptions=false\n",
				"        - --feature-gates=TLSOptions=false\n        - --feature-gates=RestartJob=true,ElasticJobSet=true\n"),
		},
		"ours with a TLS policy, in the controller and the webhook, after the flags given": {
			peer:      OurJobSet.WithTLS(TLS{MinVersion: "VersionTLS12", CipherSuites: []string{"TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384"}}),
			manifests: ourManifests,
			want: edit(t, ourManifests,
				"      - name: jobset-controller\n        args:\n        - --health-probe-bind-address=:8081\n",
				"      - name: jobset-controller\n        args:\n        - --health-probe-bind-address=:8081\n        - --tls-min-version=VersionTLS12\n        - --tls-cipher-suites=TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384\n",
				"        - --feature-gates=TLSOptions=false\n",
				"        - --feature-gates=TLSOptions=false\n        - --tls-min-version=VersionTLS12\n        - --tls-cipher-suites=TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384\n"),
		},
		"ours with the minimum version alone": {
			peer:      OurJobSet.WithTLS(TLS{MinVersion: "VersionTLS13"}),
			manifests: ourManifests,
			want: edit(t, ourManifests,
				"      - name: jobset-controller\n        args:\n        - --health-probe-bind-address=:8081\n",
				"      - name: jobset-controller\n        args:\n        - --health-probe-bind-address=:8081\n        - --tls-min-version=VersionTLS13\n",
				"        - --feature-gates=TLSOptions=false\n",
				"        - --feature-gates=TLSOptions=false\n        - --tls-min-version=VersionTLS13\n"),
		},
		"ours whose webhook's container is named otherwise": {
			peer: OurJobSet.WithFeatureGates("RestartJob"), manifests: edit(t, ourManifests, "- name: jobset-webhook", "- name: other"),
			wantErr: "deployment jobset-system/jobset-webhook has no container jobset-webhook",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "install.yaml")
			if err := os.WriteFile(path, []byte(tc.manifests), 0o644); err != nil {
				t.Fatal(err)
			}
			m, err := LoadFile(tc.peer, path)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("LoadFile: %v, want an error with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(decode(t, tc.want), m.Objects); diff != "" {
				t.Errorf("rendering (-want +got):\n%s", diff)
			}
		})
	}
}

// AppendFlags adds flags to one Deployment's container, after those it
// has, and names what is missing.
func TestManifestsAppendFlags(t *testing.T) {
	path := filepath.Join(t.TempDir(), "install.yaml")
	if err := os.WriteFile(path, []byte(ourManifests), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := LoadFile(OurJobSet, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.AppendFlags("jobset-webhook", "test", "--agent-fence-node-lease=true"); err != nil {
		t.Fatal(err)
	}
	want := edit(t, ourManifests, "        - --feature-gates=TLSOptions=false\n",
		"        - --feature-gates=TLSOptions=false\n        - --agent-fence-node-lease=true\n")
	if diff := cmp.Diff(decode(t, want), m.Objects); diff != "" {
		t.Errorf("appending to the webhook (-want +got):\n%s", diff)
	}
	if err := m.AppendFlags("jobset-gone", "test the error", "--x"); err == nil || !strings.Contains(err.Error(), "no Deployment jobset-system/jobset-gone to test the error in") {
		t.Errorf("AppendFlags to a Deployment that is not there: %v, want an error that names it", err)
	}
}

func TestAddToConfig(t *testing.T) {
	const current = "apiVersion: v1\nkind: Configuration\n# a comment\nhealth:\n  port: 8081\n"
	cases := map[string]struct {
		current string
		add     string
		want    string
		wantErr string
	}{
		"a field the Configuration does not set": {
			current: current,
			add:     "waitForPodsReady:\n  timeout: 5m\n",
			want:    current + "waitForPodsReady:\n  timeout: 5m\n",
		},
		"to a Configuration without a final newline": {
			current: strings.TrimSuffix(current, "\n"),
			add:     "waitForPodsReady:\n  timeout: 5m\n",
			want:    current + "waitForPodsReady:\n  timeout: 5m\n",
		},
		"a field the Configuration sets": {
			current: current,
			add:     "health:\n  port: 9000\n",
			wantErr: "sets health already",
		},
		"an indented document": {
			current: current,
			add:     "  timeout: 5m\n",
			wantErr: "reads timeout as <nil>",
		},
		"no fields": {
			current: current,
			add:     "# nothing\n",
			wantErr: "want a YAML document of top-level Configuration fields",
		},
		"to no Configuration": {
			current: "",
			add:     "waitForPodsReady:\n  timeout: 5m\n",
			wantErr: "no Configuration",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := addToConfig(tc.current, []byte(tc.add))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("addToConfig: %q, %v, want an error with %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestFind(t *testing.T) {
	kueue := build(t, Kueue, kueueManifests)
	trainer := build(t, Trainer, trainerManifests)
	cases := map[string]struct {
		env     string
		peer    *Peer
		want    string
		wantErr string
	}{
		"listed":                     {env: trainer + string(filepath.ListSeparator) + kueue, peer: Kueue, want: kueue},
		"listed, with feature gates": {env: trainer + string(filepath.ListSeparator) + kueue, peer: Kueue.WithFeatureGates("Something"), want: kueue},
		"not listed":                 {env: trainer, peer: Kueue, want: ""},
		"nothing listed":             {env: "", peer: Kueue, want: ""},
		"a directory of no peer":     {env: kueue + string(filepath.ListSeparator) + t.TempDir(), peer: Kueue, wantErr: "holds the manifests of 0 peers"},
		"a directory that is absent": {env: filepath.Join(t.TempDir(), "absent"), peer: Kueue, wantErr: "holds the manifests of 0 peers"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Setenv(Env, tc.env)
			got, err := Find(tc.peer)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Find: %q, %v, want an error with %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("Find: %q, %v, want %q", got, err, tc.want)
			}
		})
	}
}
