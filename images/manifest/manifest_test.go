package manifest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

func writeFile(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "manifest.yaml")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestRead(t *testing.T) {
	cases := map[string]struct {
		content string
		want    []string // kind/name of each object
		wantErr string
	}{
		"documents in order, empty ones and comments skipped": {
			content: "# generated\n---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n---\n---\n# nothing\n---\napiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: b\n  namespace: a\n",
			want:    []string{"Namespace/a", "ServiceAccount/b"},
		},
		"JSON": {
			content: `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}`,
			want:    []string{"ConfigMap/c"},
		},
		"empty file": {},
		"malformed document names the file": {
			content: "apiVersion: v1\nkind: [\n",
			wantErr: "manifest.yaml",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			objs, err := Read(writeFile(t, tc.content))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Read: error %v, want one naming %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, o := range objs {
				got = append(got, o.GetKind()+"/"+o.GetName())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("objects (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReadObject(t *testing.T) {
	var cm corev1.ConfigMap
	path := writeFile(t, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  k: v\n")
	if err := ReadObject(path, &cm); err != nil {
		t.Fatal(err)
	}
	if cm.Name != "c" || cm.Data["k"] != "v" {
		t.Errorf("ReadObject read %+v, want ConfigMap c with k=v", cm)
	}

	two := writeFile(t, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n")
	if err := ReadObject(two, &cm); err == nil || !strings.Contains(err.Error(), "holds 2 objects, want 1") {
		t.Errorf("ReadObject of two objects: error %v, want one saying it holds 2", err)
	}
}
