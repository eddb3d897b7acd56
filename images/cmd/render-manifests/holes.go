package main

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// holes are the places where the chart's templates differ from
// install.yaml: an object of install.yaml gets a token where the chart
// puts template text, is written as YAML like install.yaml, and the tokens
// are then replaced. The tokens are plain YAML scalars, so the YAML around
// them is exactly install.yaml's.
type holes struct {
	fills []fill
}

// A fill is what replaces a token: text in place of the scalar (inline),
// or lines in place of the whole line the token is on (block).
type fill struct {
	inline string
	block  func(at line) string
}

// line is where a block token stands: "<indent>[- ][key: ]TOKEN", or a
// map key "<indent>TOKEN: ”".
type line struct {
	indent, dash, key string
}

// col is the column of the line's key (or of its item, under a dash).
func (l line) col() int { return len(l.indent) + len(l.dash) }

// head is the line up to the key's colon, for a block that keeps the key.
func (l line) head() string { return l.indent + l.dash + l.key + ":" }

func token(i int) string { return fmt.Sprintf("__hole_%d__", i) }

// value returns a token that the chart replaces with expr, as a whole
// scalar: expr must render valid YAML there (quote strings that may need
// it).
func (h *holes) value(expr string) string {
	h.fills = append(h.fills, fill{inline: expr})
	return token(len(h.fills) - 1)
}

// lines returns a token that the chart replaces, with the whole line it is
// on, by what block returns.
func (h *holes) lines(block func(at line) string) string {
	h.fills = append(h.fills, fill{block: block})
	return token(len(h.fills) - 1)
}

var (
	lineToken   = regexp.MustCompile(`(?m)^( *)(- )?(?:([A-Za-z0-9_./-]+): )?__hole_(\d+)__(?:: "")?$`)
	inlineToken = regexp.MustCompile(`'?__hole_(\d+)__'?`)
)

// fill writes the template: template delimiters in install.yaml's text
// are escaped, then each token replaced.
func (h *holes) fill(yaml string) (string, error) {
	yaml = strings.NewReplacer("{{", `{{ "{{" }}`, "}}", `{{ "}}" }}`).Replace(yaml)
	var err error
	out := lineToken.ReplaceAllStringFunc(yaml, func(m string) string {
		g := lineToken.FindStringSubmatch(m)
		i, _ := strconv.Atoi(g[4])
		f := h.fills[i]
		if f.block == nil {
			return m
		}
		return f.block(line{indent: g[1], dash: g[2], key: g[3]})
	})
	out = inlineToken.ReplaceAllStringFunc(out, func(m string) string {
		i, _ := strconv.Atoi(inlineToken.FindStringSubmatch(m)[1])
		f := h.fills[i]
		if f.block != nil {
			err = fmt.Errorf("the token of block %d is not on a line of its own", i)
			return m
		}
		return f.inline
	})
	return out, err
}
