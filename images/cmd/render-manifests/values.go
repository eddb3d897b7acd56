package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"
)

// chartValues are the chart's values, in the order values.yaml lists them,
// each with its default (install.yaml's value), its comment and its JSON
// schema (values.schema.json, which Helm checks before it renders).
type chartValues struct {
	list []chartValue
	// groupDocs are the comments of the maps that hold values.
	groupDocs map[string]string
}

type chartValue struct {
	path   string
	def    any
	doc    string
	schema map[string]any
}

// add declares the value at path and returns the template's reference to
// it.
func (v *chartValues) add(path string, def any, doc string, schema map[string]any) string {
	for _, c := range v.list {
		if c.path == path {
			panic("value " + path + " declared twice")
		}
	}
	v.list = append(v.list, chartValue{path: path, def: def, doc: doc, schema: schema})
	return ".Values." + path
}

// topLevelOrder is the order of values.yaml's sections.
var topLevelOrder = []string{"image", "imagePullSecrets", "controller", "webhook", "agent", "featureGates", "tls", "certManager", "metrics", "flowControl"}

// valueNode is a map of values.yaml: a value (leaf) or a map of nodes.
type valueNode struct {
	name     string
	path     string
	leaf     *chartValue
	children []*valueNode
}

func (n *valueNode) child(name string) *valueNode {
	for _, c := range n.children {
		if c.name == name {
			return c
		}
	}
	path := name
	if n.path != "" {
		path = n.path + "." + name
	}
	c := &valueNode{name: name, path: path}
	n.children = append(n.children, c)
	return c
}

func (v *chartValues) tree() *valueNode {
	root := &valueNode{}
	for _, name := range topLevelOrder {
		root.child(name)
	}
	for i := range v.list {
		n := root
		for _, part := range strings.Split(v.list[i].path, ".") {
			n = n.child(part)
		}
		n.leaf = &v.list[i]
	}
	// Sections nothing was declared in are dropped.
	root.children = slices.DeleteFunc(root.children, func(c *valueNode) bool { return c.leaf == nil && len(c.children) == 0 })
	return root
}

// valuesYAML writes values.yaml: every value with its comment.
func (v *chartValues) valuesYAML(header string) (string, error) {
	var b strings.Builder
	b.WriteString(header)
	var write func(n *valueNode, indent string) error
	write = func(n *valueNode, indent string) error {
		for i, c := range n.children {
			if indent == "" && i > 0 {
				b.WriteString("\n")
			}
			doc := v.groupDocs[c.path]
			if c.leaf != nil {
				doc = c.leaf.doc
			}
			for _, l := range wrap(doc, 76-len(indent)) {
				b.WriteString(indent + "# " + l + "\n")
			}
			if c.leaf == nil {
				b.WriteString(indent + c.name + ":\n")
				if err := write(c, indent+"  "); err != nil {
					return err
				}
				continue
			}
			data, err := yaml.Marshal(c.leaf.def)
			if err != nil {
				return fmt.Errorf("value %s: %w", c.path, err)
			}
			text := strings.TrimSuffix(string(data), "\n")
			if text != "{}" && text != "[]" && (strings.Contains(text, "\n") || strings.Contains(text, ": ") || strings.HasPrefix(text, "- ")) {
				b.WriteString(indent + c.name + ":\n")
				for _, l := range strings.Split(text, "\n") {
					b.WriteString(indent + "  " + l + "\n")
				}
				continue
			}
			b.WriteString(indent + c.name + ": " + text + "\n")
		}
		return nil
	}
	err := write(v.tree(), "")
	return b.String(), err
}

// schemaJSON writes values.schema.json: every map closed to keys it does
// not declare, so that a misspelt value is an error naming it rather than
// a setting silently ignored.
func (v *chartValues) schemaJSON() ([]byte, error) {
	var schema func(n *valueNode) map[string]any
	schema = func(n *valueNode) map[string]any {
		if n.leaf != nil {
			s := map[string]any{"description": n.leaf.doc}
			for k, val := range n.leaf.schema {
				s[k] = val
			}
			return s
		}
		props := map[string]any{}
		for _, c := range n.children {
			props[c.name] = schema(c)
		}
		s := map[string]any{"type": "object", "additionalProperties": false, "properties": props}
		if doc := v.groupDocs[n.path]; doc != "" {
			s["description"] = doc
		}
		return s
	}
	root := schema(v.tree())
	root["$schema"] = "https://json-schema.org/draft-07/schema#"
	// A parent chart passes its global values to every subchart.
	root["properties"].(map[string]any)["global"] = map[string]any{"type": "object"}
	data, err := json.MarshalIndent(root, "", "  ")
	return append(data, '\n'), err
}

// wrap breaks text into lines of at most width characters, at spaces.
func wrap(text string, width int) []string {
	var lines []string
	var cur string
	for _, w := range strings.Fields(text) {
		if cur != "" && len(cur)+1+len(w) > width {
			lines = append(lines, cur)
			cur = ""
		}
		if cur != "" {
			cur += " "
		}
		cur += w
	}
	if cur != "" {
		lines = append(lines, cur)
	}
	return lines
}

// Schemas of values.
var (
	stringSchema   = map[string]any{"type": "string"}
	boolSchema     = map[string]any{"type": "boolean"}
	countSchema    = map[string]any{"type": "integer", "minimum": 0}
	objectSchema   = map[string]any{"type": "object"}
	arraySchema    = map[string]any{"type": "array"}
	labelsSchema   = map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"}}
	argsSchema     = map[string]any{"type": "array", "items": map[string]any{"type": "string"}}
	durationSchema = map[string]any{"type": "string", "pattern": `^(0|([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+)$`}
)

func (k kind) schema() map[string]any {
	switch k {
	case kindDuration:
		return durationSchema
	case kindInt:
		return map[string]any{"type": "integer"}
	case kindNumber:
		return map[string]any{"type": "number"}
	case kindBool:
		return boolSchema
	}
	return stringSchema
}
