package peers

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// LocalImagePrefix begins the reference of every image tools/peers builds:
// images that no registry serves, imported into the nodes' containerd.
const LocalImagePrefix = "localhost/"

// pullNothing makes every container of the Deployments use the image the
// build imported (imagePullPolicy IfNotPresent: the local cluster reaches
// no registry), and refuses an image the build did not make.
func pullNothing(objs []*unstructured.Unstructured) error {
	for _, d := range only(objs, "Deployment") {
		for _, field := range []string{"initContainers", "containers"} {
			path := []string{"spec", "template", "spec", field}
			containers, _, err := unstructured.NestedSlice(d.Object, path...)
			if err != nil {
				return fmt.Errorf("deployment %s: %w", ref(d), err)
			}
			for _, c := range containers {
				c, ok := c.(map[string]any)
				if !ok {
					return fmt.Errorf("deployment %s: %s holds a %T, not a container", ref(d), strings.Join(path, "."), c)
				}
				if image, _ := c["image"].(string); !strings.HasPrefix(image, LocalImagePrefix) {
					return fmt.Errorf("deployment %s, container %v: image %q is not one the build made (%s...): the build's `kustomize edit set image` missed it", ref(d), c["name"], image, LocalImagePrefix)
				}
				c["imagePullPolicy"] = "IfNotPresent"
			}
			if len(containers) > 0 {
				if err := unstructured.SetNestedSlice(d.Object, containers, path...); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// ref names an object as `kubectl` does: namespace/name.
func ref(u *unstructured.Unstructured) string {
	if u.GetNamespace() == "" {
		return u.GetName()
	}
	return u.GetNamespace() + "/" + u.GetName()
}

// configFile is where a peer keeps its Configuration: a file in a
// ConfigMap of its namespace, which its manager reads once, at start.
type configFile struct {
	ConfigMap string
	Key       string
}

// in returns the ConfigMap of objs that holds the Configuration, and the
// Configuration.
func (f *configFile) in(objs []*unstructured.Unstructured, namespace string) (*unstructured.Unstructured, map[string]any, error) {
	cm := find(objs, "ConfigMap", namespace, f.ConfigMap)
	if cm == nil {
		return nil, nil, fmt.Errorf("no ConfigMap %s/%s, which holds the Configuration", namespace, f.ConfigMap)
	}
	text, _, _ := unstructured.NestedString(cm.Object, "data", f.Key)
	cfg, err := parseConfig(text)
	if err != nil {
		return nil, nil, fmt.Errorf("ConfigMap %s/%s, data.%s: %w", namespace, f.ConfigMap, f.Key, err)
	}
	return cm, cfg, nil
}

func parseConfig(text string) (map[string]any, error) {
	var cfg map[string]any
	if err := yaml.Unmarshal([]byte(text), &cfg); err != nil {
		return nil, err
	}
	if cfg == nil {
		return nil, fmt.Errorf("no Configuration")
	}
	return cfg, nil
}

// addToConfig returns the Configuration text with fields, a YAML document
// of top-level fields, appended: the peer's own text stays as it is,
// comments and all. A field the Configuration sets already is refused:
// only new settings, none that would override what the peer's own
// defaults chose.
func addToConfig(text string, fields []byte) (string, error) {
	cfg, err := parseConfig(text)
	if err != nil {
		return "", err
	}
	var add map[string]any
	if err := yaml.Unmarshal(fields, &add); err != nil || len(add) == 0 {
		return "", fmt.Errorf("want a YAML document of top-level Configuration fields, got %q (%v)", fields, err)
	}
	keys := slices.Sorted(maps.Keys(add))
	for _, k := range keys {
		if _, set := cfg[k]; set {
			return "", fmt.Errorf("the Configuration sets %s already: only fields it does not set may be added", k)
		}
	}
	merged := strings.TrimRight(text, "\n") + "\n" + string(fields)
	// What was appended must read back as it was given (an indented
	// document would have become part of the field before it).
	got, err := parseConfig(merged)
	if err != nil {
		return "", fmt.Errorf("the Configuration with %q appended: %w", fields, err)
	}
	for _, k := range keys {
		if !reflect.DeepEqual(got[k], add[k]) {
			return "", fmt.Errorf("the Configuration with %q appended reads %s as %v, not %v", fields, k, got[k], add[k])
		}
	}
	return merged, nil
}

// nested returns the value at path of a parsed Configuration, and whether
// it is there.
func nested(cfg map[string]any, path ...string) (any, bool) {
	var v any = cfg
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[k]; !ok {
			return nil, false
		}
	}
	return v, true
}
