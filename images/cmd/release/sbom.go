package main

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"debug/buildinfo"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	spdxjson "github.com/spdx/tools-golang/json"
	"github.com/spdx/tools-golang/spdx"
	"github.com/spdx/tools-golang/spdx/v2/common"

	"github.com/fastjobset/jobset/api/version"
	"github.com/fastjobset/jobset/images/internal/oci"
)

// writeSBOMs writes dir/<image>.spdx.json for each image tar: an SPDX
// document naming the image, each platform's binaries in it, and the Go
// modules each binary is built from, as its build information lists them.
func writeSBOMs(dir string, images []string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, tarPath := range images {
		doc, name, err := imageSBOM(tarPath)
		if err != nil {
			return fmt.Errorf("SBOM of %s: %w", tarPath, err)
		}
		f, err := os.Create(filepath.Join(dir, name+".spdx.json"))
		if err != nil {
			return err
		}
		err = spdxjson.Write(doc, f, spdxjson.Indent("  "))
		if closeErr := f.Close(); err == nil {
			err = closeErr
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// created is the SBOMs' creation time: SOURCE_DATE_EPOCH's if set, else
// the epoch, so that a release rebuilt from the same images is the same.
func created() (string, error) {
	seconds := int64(0)
	if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		var err error
		if seconds, err = strconv.ParseInt(s, 10, 64); err != nil {
			return "", fmt.Errorf("SOURCE_DATE_EPOCH %q: want seconds since 1970: %w", s, err)
		}
	}
	return time.Unix(seconds, 0).UTC().Format(time.RFC3339), nil
}

func imageSBOM(tarPath string) (*spdx.Document, string, error) {
	desc, err := oci.Image(tarPath)
	if err != nil {
		return nil, "", err
	}
	name, err := oci.ImageName(desc)
	if err != nil {
		return nil, "", err
	}
	dir, err := os.MkdirTemp("", "sbom-")
	if err != nil {
		return nil, "", err
	}
	defer os.RemoveAll(dir)
	if err := oci.Extract(tarPath, dir); err != nil {
		return nil, "", err
	}
	_, idx, err := oci.Index(dir)
	if err != nil {
		return nil, "", err
	}
	images, err := oci.Platforms(idx)
	if err != nil {
		return nil, "", err
	}
	when, err := created()
	if err != nil {
		return nil, "", err
	}

	imageID := spdxID("image-" + name)
	doc := &spdx.Document{
		SPDXVersion:       spdx.Version,
		DataLicense:       spdx.DataLicense,
		SPDXIdentifier:    "DOCUMENT",
		DocumentName:      name + "-" + version.Tag,
		DocumentNamespace: "https://github.com/fastjobset/jobset/spdx/" + name + "-" + version.Tag + "-" + desc.Digest.Hex,
		CreationInfo: &spdx.CreationInfo{
			Creators: []common.Creator{{CreatorType: "Tool", Creator: "fastjobset-release-" + version.Tag}},
			Created:  when,
		},
		Packages: []*spdx.Package{{
			PackageName:             name,
			PackageSPDXIdentifier:   imageID,
			PackageVersion:          version.Tag,
			PackageDownloadLocation: "NOASSERTION",
			PackageLicenseConcluded: "NOASSERTION",
			PackageLicenseDeclared:  "Apache-2.0",
			PackageCopyrightText:    "NOASSERTION",
			PackageChecksums:        []common.Checksum{{Algorithm: common.SHA256, Value: desc.Digest.Hex}},
			PackageComment:          "The OCI image index " + desc.Annotations[oci.AnnotationContainerdName] + "@" + desc.Digest.String(),
			PrimaryPackagePurpose:   "CONTAINER",
		}},
		Relationships: []*spdx.Relationship{{
			RefA:         common.MakeDocElementID("", "DOCUMENT"),
			RefB:         common.MakeDocElementID("", string(imageID)),
			Relationship: common.TypeRelationshipDescribe,
		}},
	}
	modules := map[common.ElementID]bool{}
	for _, platform := range slices.Sorted(maps.Keys(images)) {
		binaries, err := executables(images[platform])
		if err != nil {
			return nil, "", fmt.Errorf("%s: %w", platform, err)
		}
		if len(binaries) == 0 {
			return nil, "", fmt.Errorf("%s: the image holds no executable", platform)
		}
		for _, path := range slices.Sorted(maps.Keys(binaries)) {
			data := binaries[path]
			info, err := buildinfo.Read(bytes.NewReader(data))
			if err != nil {
				return nil, "", fmt.Errorf("%s %s: %w", platform, path, err)
			}
			if len(info.Deps) == 0 {
				return nil, "", fmt.Errorf("%s %s lists no Go modules in its build information: build it with images/image.bzl, which links images/modinfo.bzl into it", platform, path)
			}
			sum := sha256.Sum256(data)
			binaryID := spdxID("binary-" + platform + path)
			doc.Packages = append(doc.Packages, &spdx.Package{
				PackageName:             path,
				PackageSPDXIdentifier:   binaryID,
				PackageVersion:          version.Tag,
				PackageFileName:         path,
				PackageDownloadLocation: "NOASSERTION",
				PackageLicenseConcluded: "NOASSERTION",
				PackageLicenseDeclared:  "Apache-2.0",
				PackageCopyrightText:    "NOASSERTION",
				PackageChecksums:        []common.Checksum{{Algorithm: common.SHA256, Value: fmt.Sprintf("%x", sum)}},
				PackageComment:          fmt.Sprintf("%s for %s, built with %s from package %s", path, platform, info.GoVersion, info.Path),
				PrimaryPackagePurpose:   "APPLICATION",
			})
			doc.Relationships = append(doc.Relationships, &spdx.Relationship{
				RefA:         common.MakeDocElementID("", string(imageID)),
				RefB:         common.MakeDocElementID("", string(binaryID)),
				Relationship: common.TypeRelationshipContains,
			})
			for _, m := range info.Deps {
				if m.Replace != nil {
					m = m.Replace
				}
				moduleID := spdxID("go-module-" + m.Path + "-" + m.Version)
				if !modules[moduleID] {
					modules[moduleID] = true
					doc.Packages = append(doc.Packages, &spdx.Package{
						PackageName:             m.Path,
						PackageSPDXIdentifier:   moduleID,
						PackageVersion:          m.Version,
						PackageDownloadLocation: "https://proxy.golang.org/" + m.Path + "/@v/" + m.Version + ".zip",
						PackageLicenseConcluded: "NOASSERTION",
						PackageLicenseDeclared:  "NOASSERTION",
						PackageCopyrightText:    "NOASSERTION",
						PackageComment:          "Go module sum " + m.Sum,
						PackageExternalReferences: []*spdx.PackageExternalReference{{
							Category: common.CategoryPackageManager,
							RefType:  common.TypePackageManagerPURL,
							Locator:  "pkg:golang/" + m.Path + "@" + m.Version,
						}},
						PrimaryPackagePurpose: "LIBRARY",
					})
				}
				doc.Relationships = append(doc.Relationships, &spdx.Relationship{
					RefA:         common.MakeDocElementID("", string(binaryID)),
					RefB:         common.MakeDocElementID("", string(moduleID)),
					Relationship: common.TypeRelationshipDependsOn,
				})
			}
		}
	}
	return doc, name, nil
}

// spdxID makes an SPDX element ID of s: letters, digits, '.' and '-' only.
func spdxID(s string) common.ElementID {
	return common.ElementID(regexp.MustCompile(`[^A-Za-z0-9.-]+`).ReplaceAllString(s, "-"))
}

// executables reads the executable files of img's only layer, by path.
func executables(img v1.Image) (map[string][]byte, error) {
	layers, err := img.Layers()
	if err != nil {
		return nil, err
	}
	if len(layers) != 1 {
		return nil, fmt.Errorf("%d layers, want one", len(layers))
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	found := map[string][]byte{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return found, nil
		}
		if err != nil {
			return nil, err
		}
		if h.Typeflag != tar.TypeReg || h.Mode&0o111 == 0 {
			continue
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			return nil, err
		}
		found["/"+strings.TrimPrefix(h.Name, "/")] = data
	}
}
