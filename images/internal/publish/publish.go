// Package publish pushes image tars written by package oci to a registry,
// through go-containerregistry: each tar's image index, with the image of
// every platform it lists, under one tag.
package publish

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/fastjobset/jobset/images/internal/oci"
)

// Options say what to push where.
type Options struct {
	// Registry is the registry host with an optional repository prefix:
	// localhost:5000 or registry.example.com/team.
	Registry string
	// Tag is given to every image.
	Tag string
	// Insecure allows plain HTTP to any registry.
	Insecure bool
	// Images are image tars; each is pushed under the last path element
	// of the repository it was built for.
	Images []string
}

// Pushed is one image in the registry.
type Pushed struct {
	Reference string
	Digest    string
}

// Push pushes every image and returns those pushed, stopping at the first
// failure.
func Push(ctx context.Context, o Options) ([]Pushed, error) {
	if o.Registry == "" || o.Tag == "" {
		return nil, errors.New("--registry and --tag are required, e.g. --registry registry.example.com/team --tag v0.1.0")
	}
	if len(o.Images) == 0 {
		return nil, errors.New("no images to push: give --image <tar> (the Bazel target //images:push passes all three)")
	}
	var nameOpts []name.Option
	if o.Insecure {
		nameOpts = append(nameOpts, name.Insecure)
	}
	var pushed []Pushed
	for _, tarPath := range o.Images {
		p, err := pushOne(ctx, o, tarPath, nameOpts)
		if err != nil {
			return pushed, err
		}
		pushed = append(pushed, p)
	}
	return pushed, nil
}

func pushOne(ctx context.Context, o Options, tarPath string, nameOpts []name.Option) (Pushed, error) {
	desc, err := oci.Image(tarPath)
	if err != nil {
		return Pushed{}, err
	}
	repo, err := oci.ImageName(desc)
	if err != nil {
		return Pushed{}, fmt.Errorf("%s: %w", tarPath, err)
	}
	target := strings.TrimSuffix(o.Registry, "/") + "/" + repo + ":" + o.Tag
	ref, err := name.NewTag(target, nameOpts...)
	if err != nil {
		return Pushed{}, fmt.Errorf("--registry %q with --tag %q make %q, which is no image reference: %w", o.Registry, o.Tag, target, err)
	}

	dir, err := os.MkdirTemp("", "push-")
	if err != nil {
		return Pushed{}, err
	}
	defer os.RemoveAll(dir)
	if err := oci.Extract(tarPath, dir); err != nil {
		return Pushed{}, err
	}
	_, idx, err := oci.Index(dir)
	if err != nil {
		return Pushed{}, fmt.Errorf("%s: %w", tarPath, err)
	}
	// The whole index, every platform's image under the one tag.
	if err := remote.WriteIndex(ref, idx, remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain)); err != nil {
		return Pushed{}, fmt.Errorf("pushing %s to %s (check --registry, and `docker login %s` if it needs credentials): %w",
			repo, ref, ref.RegistryStr(), err)
	}
	return Pushed{Reference: ref.String(), Digest: desc.Digest.String()}, nil
}
