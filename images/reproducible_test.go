package images_test

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fastjobset/jobset/images/internal/oci"
	"github.com/fastjobset/jobset/tools/testing/runfiles"
)

// Set by the Bazel target: the image tool and, per image, what it was built
// from.
var (
	buildImage = flag.String("build-image", "", "The build-image tool.")
	builtFrom  = flag.String("images", "", "Comma-separated tar=binary=path of each image Bazel built.")
)

// TestImagesAreReproducible builds each image twice more, from the binary
// Bazel built it from, at other times and places, and requires the same
// bytes, hence the same digest, as Bazel's.
func TestImagesAreReproducible(t *testing.T) {
	if *builtFrom == "" {
		t.Skip("checks the images Bazel builds: run `bazel test //images:images_test`")
	}
	for _, image := range strings.Split(*builtFrom, ",") {
		parts := strings.Split(image, "=")
		if len(parts) != 3 {
			t.Fatalf("-images entry %q: want tar=binary=path", image)
		}
		tarPath, binary, inImage := runfiles.Path(parts[0]), runfiles.Path(parts[1]), parts[2]
		t.Run(filepath.Base(tarPath), func(t *testing.T) {
			want, err := os.ReadFile(tarPath)
			if err != nil {
				t.Fatal(err)
			}
			desc, err := oci.Image(tarPath)
			if err != nil {
				t.Fatal(err)
			}
			reference := desc.Annotations[oci.AnnotationContainerdName]
			colon := strings.LastIndex(reference, ":")
			if colon < 0 {
				t.Fatalf("image name %q has no tag", reference)
			}
			repository, tag := reference[:colon], reference[colon+1:]
			for i := range 2 {
				// A fresh copy of the binary, with a new time stamp, in a
				// new directory.
				dir := t.TempDir()
				data, err := os.ReadFile(binary)
				if err != nil {
					t.Fatal(err)
				}
				copied := filepath.Join(dir, "bin")
				if err := os.WriteFile(copied, data, 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.Chtimes(copied, time.Now(), time.Now().Add(time.Duration(i+1)*time.Hour)); err != nil {
					t.Fatal(err)
				}
				out := filepath.Join(dir, "image.tar")
				cmd := exec.Command(runfiles.Path(*buildImage), "-binary", copied, "-path", inImage, "-repository", repository, "-tag", tag, "-out", out)
				if output, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("build-image: %v\n%s", err, output)
				}
				got, err := os.ReadFile(out)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) {
					gotDesc, _ := oci.Image(out)
					t.Errorf("rebuild %d gives digest %s, Bazel's image has %s: the image is not reproducible", i+1, gotDesc.Digest, desc.Digest)
				}
			}
		})
	}
}
