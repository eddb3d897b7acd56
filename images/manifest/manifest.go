// Package manifest reads multi-document YAML manifests and applies them
// with server-side apply, as `kubectl apply --server-side` does: the
// manifest generator reads the files controller-gen writes with it, and the
// demo, the benchmarks and the tests deploy what the generator writes.
package manifest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// FieldManager owns the fields Apply sets.
const FieldManager = "jobset-tools"

// Read returns the objects of the multi-document YAML file at path.
func Read(path string) ([]*unstructured.Unstructured, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	decoder := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var objs []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		if err := decoder.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return objs, nil
			}
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if len(u.Object) > 0 {
			objs = append(objs, u)
		}
	}
}

// ReadObject reads the file at path, which must hold one object, into
// into (a typed object such as a JobSet).
func ReadObject(path string, into any) error {
	objs, err := Read(path)
	if err != nil {
		return err
	}
	if len(objs) != 1 {
		return fmt.Errorf("%s holds %d objects, want 1", path, len(objs))
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(objs[0].Object, into); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// Apply applies every object of the file at path. A non-empty namespace is
// that of `kubectl apply -n`: namespaced objects that name none go there,
// and one that names another is an error.
func Apply(ctx context.Context, c client.Client, path, namespace string, opts ...client.ApplyOption) error {
	objs, err := Read(path)
	if err != nil {
		return err
	}
	for _, u := range objs {
		if err := setNamespace(c, u, namespace); err != nil {
			return fmt.Errorf("%s %s from %s: %w", u.GetKind(), u.GetName(), path, err)
		}
	}
	if err := ApplyObjects(ctx, c, objs, opts...); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// ApplyObjects applies objs in their order, leaving them as they are (the
// server's answer goes to copies): a caller may apply them again. Options
// given override the defaults (FieldOwner(FieldManager), ForceOwnership).
func ApplyObjects(ctx context.Context, c client.Client, objs []*unstructured.Unstructured, opts ...client.ApplyOption) error {
	opts = append([]client.ApplyOption{client.ForceOwnership, client.FieldOwner(FieldManager)}, opts...)
	for _, u := range objs {
		if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u.DeepCopy()), opts...); err != nil {
			return fmt.Errorf("applying %s %s: %w", u.GetKind(), client.ObjectKeyFromObject(u), err)
		}
	}
	return nil
}

func setNamespace(c client.Client, u *unstructured.Unstructured, namespace string) error {
	switch {
	case namespace == "" || u.GetNamespace() == namespace:
		return nil
	case u.GetNamespace() != "":
		return fmt.Errorf("names namespace %s, not %s", u.GetNamespace(), namespace)
	}
	namespaced, err := c.IsObjectNamespaced(u)
	if err != nil {
		return err
	}
	if namespaced {
		u.SetNamespace(namespace)
	}
	return nil
}
