package publish

import (
	"context"
	"flag"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/fastjobset/jobset/images/internal/oci"
	"github.com/fastjobset/jobset/tools/testing/runfiles"
)

// images are the tars to push: the Bazel target passes the three images
// Bazel built; under plain `go test` the test builds small ones.
var images imageFlags

type imageFlags []string

func (f *imageFlags) String() string     { return strings.Join(*f, ",") }
func (f *imageFlags) Set(v string) error { *f = append(*f, v); return nil }

func init() {
	flag.Var(&images, "image", "An image tar to push (repeatable).")
}

func imageTars(t *testing.T) []string {
	if len(images) > 0 {
		tars := make([]string, len(images))
		for i, p := range images {
			tars[i] = runfiles.Path(p)
		}
		return tars
	}
	dir := t.TempDir()
	var tars []string
	for _, n := range []string{"jobset-controller", "jobset-webhook", "jobset-agent"} {
		p := filepath.Join(dir, n+".tar")
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		_, err = oci.Write(f, oci.Spec{
			Reference:  "ghcr.io/fastjobset/" + n + ":dev",
			Entrypoint: []string{"/" + n},
			Variants: []oci.Variant{
				{Platform: v1.Platform{OS: "linux", Architecture: "amd64"}, Files: []oci.File{{Path: "/" + n, Mode: 0o755, Data: []byte("#!" + n)}}},
				{Platform: v1.Platform{OS: "linux", Architecture: "arm64"}, Files: []oci.File{{Path: "/" + n, Mode: 0o755, Data: []byte("#!arm64 " + n)}}},
			},
		})
		if closeErr := f.Close(); err == nil {
			err = closeErr
		}
		if err != nil {
			t.Fatal(err)
		}
		tars = append(tars, p)
	}
	return tars
}

// TestPushToLoopbackRegistry pushes to a real registry server on loopback,
// pulls every image back, and compares digests and configuration.
func TestPushToLoopbackRegistry(t *testing.T) {
	server := httptest.NewServer(registry.New()) // listens on 127.0.0.1
	defer server.Close()
	host := strings.TrimPrefix(server.URL, "http://")

	tars := imageTars(t)
	pushed, err := Push(context.Background(), Options{Registry: host + "/team", Tag: "v1.2.3", Images: tars})
	if err != nil {
		t.Fatal(err)
	}
	if len(pushed) != len(tars) {
		t.Fatalf("pushed %d images, want %d", len(pushed), len(tars))
	}
	for i, p := range pushed {
		built, err := oci.Image(tars[i])
		if err != nil {
			t.Fatal(err)
		}
		wantRef := host + "/team/" + strings.TrimSuffix(filepath.Base(tars[i]), ".tar") + ":v1.2.3"
		if p.Reference != wantRef {
			t.Errorf("pushed %s, want %s", p.Reference, wantRef)
		}
		ref, err := name.ParseReference(p.Reference)
		if err != nil {
			t.Fatal(err)
		}
		idx, err := remote.Index(ref)
		if err != nil {
			t.Fatalf("pulling %s back: %v", ref, err)
		}
		digest, err := idx.Digest()
		if err != nil {
			t.Fatal(err)
		}
		if digest != built.Digest || p.Digest != built.Digest.String() {
			t.Errorf("%s: registry has digest %s, reported %s, built %s", ref, digest, p.Digest, built.Digest)
		}
		// What a node of each architecture pulls by the tag.
		for _, arch := range []string{"amd64", "arm64"} {
			img, err := remote.Image(ref, remote.WithPlatform(v1.Platform{OS: "linux", Architecture: arch}))
			if err != nil {
				t.Fatalf("pulling %s for linux/%s: %v", ref, arch, err)
			}
			cfg, err := img.ConfigFile()
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Architecture != arch || cfg.Config.User != "65532:65532" || len(cfg.Config.Entrypoint) != 1 {
				t.Errorf("%s for linux/%s: architecture %q, user %q, entrypoint %v; want %s, nonroot and the binary", ref, arch, cfg.Architecture, cfg.Config.User, cfg.Config.Entrypoint, arch)
			}
		}
	}
}

// TestPushToWrongRegistry: nothing listens there, and the error says which
// flag to check.
func TestPushToWrongRegistry(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()

	tars := imageTars(t)
	for _, tc := range []struct{ registry, want string }{
		{closed + "/team", "check --registry"},
		{"Not A Registry//", "--registry"},
		{"", "--registry and --tag are required"},
	} {
		_, err := Push(context.Background(), Options{Registry: tc.registry, Tag: "v1", Images: tars[:1]})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("registry %q: error %v, want one that mentions %q", tc.registry, err, tc.want)
		}
	}
}
