package images_test

import (
	"bytes"
	"flag"
	"fmt"
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

// builtImage is an image Bazel built and the binaries it was built from:
// its entrypoint first, then the further binaries it ships, then the same
// for each further architecture.
type builtImage struct {
	tar   string
	files []builtFile
}

type builtFile struct{ binary, inImage string }

// builtImages reads -images: tar=binary=/path[=binary=/path...], one
// entry per image.
func builtImages(t *testing.T) []builtImage {
	t.Helper()
	var images []builtImage
	for _, entry := range strings.Split(*builtFrom, ",") {
		parts := strings.Split(entry, "=")
		if len(parts) < 3 || len(parts)%2 == 0 {
			t.Fatalf("-images entry %q: want tar=binary=/path[=binary=/path...]", entry)
		}
		image := builtImage{tar: runfiles.Path(parts[0])}
		for i := 1; i < len(parts); i += 2 {
			image.files = append(image.files, builtFile{binary: runfiles.Path(parts[i]), inImage: parts[i+1]})
		}
		images = append(images, image)
	}
	return images
}

// TestImagesAreReproducible builds each image twice more, from the
// binaries Bazel built it from, at other times and places, and requires
// the same bytes, hence the same digest, as Bazel's.
func TestImagesAreReproducible(t *testing.T) {
	if *builtFrom == "" {
		t.Skip("checks the images Bazel builds: run `bazel test //images:images_test`")
	}
	for _, image := range builtImages(t) {
		tarPath := image.tar
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
				// Fresh copies of the binaries, with new time stamps, in a
				// new directory.
				dir := t.TempDir()
				var copies []string
				for j, f := range image.files {
					data, err := os.ReadFile(f.binary)
					if err != nil {
						t.Fatal(err)
					}
					copied := filepath.Join(dir, fmt.Sprintf("bin%d", j))
					if err := os.WriteFile(copied, data, 0o700); err != nil {
						t.Fatal(err)
					}
					if err := os.Chtimes(copied, time.Now(), time.Now().Add(time.Duration(i+1)*time.Hour)); err != nil {
						t.Fatal(err)
					}
					copies = append(copies, copied)
				}
				out := filepath.Join(dir, "image.tar")
				// The entrypoint's binaries, one per architecture, and the
				// further files.
				args := []string{"-path", image.files[0].inImage, "-repository", repository, "-tag", tag, "-out", out}
				for j, f := range image.files {
					if f.inImage == image.files[0].inImage {
						args = append(args, "-binary", copies[j])
					} else {
						args = append(args, "-file", f.inImage+"="+copies[j])
					}
				}
				cmd := exec.Command(runfiles.Path(*buildImage), args...)
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
