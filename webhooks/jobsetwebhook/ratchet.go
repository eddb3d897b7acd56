package jobsetwebhook

import (
	"reflect"
	"strconv"
	"strings"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
)

// Ratcheting, as the apiserver does it for CRD schemas (KEP-4008): an
// update is judged on what it changes. Validate's rules tighten from one
// release to the next, and a JobSet stored under looser rules must stay
// updatable: Kueue suspends and resumes it, the garbage collector removes
// its finalizers, and a rejection there is a loop or a hung deletion.
//
// An error of Validate on the new object is dropped when both hold:
//   - the value at its field path is the same in the old object, so the
//     update did not touch what the error is about; and
//   - Validate on the old object reports the same error (type and path),
//     so it is not the update that made the value invalid. Some rules read
//     one field and report on another (restartStrategy InPlaceRestart makes
//     the replicatedJobs need the agent); switching an existing JobSet to
//     InPlaceRestart changes no replicatedJob, yet the errors it causes are
//     new and must stand. The apiserver gets the same effect by ratcheting
//     a CEL rule only when all of self, the subtree the rule reads, is
//     unchanged.
//
// Rules that compare old and new (the immutability of replicatedJobs in
// ValidateUpdate) are transition rules and never ratcheted, as with CEL
// rules that use oldSelf.
func ratchet(errs, oldErrs field.ErrorList, js, old *jobset.JobSet) field.ErrorList {
	type key struct {
		typ  field.ErrorType
		path string
	}
	before := make(map[key]bool, len(oldErrs))
	for _, e := range oldErrs {
		before[key{e.Type, e.Field}] = true
	}
	var out field.ErrorList
	for _, e := range errs {
		if before[key{e.Type, e.Field}] && unchangedAt(e.Field, js, old) {
			continue
		}
		out = append(out, e)
	}
	return out
}

// unchangedAt reports whether the value at a field path, as
// field.Path.String renders it, is semantically equal in both objects. A
// path it cannot follow counts as changed, so the error stands.
func unchangedAt(path string, js, old *jobset.JobSet) bool {
	steps, ok := parsePath(path)
	if !ok {
		return false
	}
	a, okA := lookup(reflect.ValueOf(js), steps)
	b, okB := lookup(reflect.ValueOf(old), steps)
	switch {
	case !okA || !okB:
		return false
	case !a.IsValid() || !b.IsValid():
		return a.IsValid() == b.IsValid() // absent from both, or from one
	}
	return apiequality.Semantic.DeepEqual(a.Interface(), b.Interface())
}

// step is one element of a field path: a field name, or the subscript of
// an index or a map key.
type step struct {
	name      string
	subscript bool
}

// parsePath splits "spec.replicatedJobs[0].template.metadata.annotations[a.b/c]"
// into its steps. Subscripts are kept as text: whether one is an index or
// a key depends on the value it is applied to.
func parsePath(path string) ([]step, bool) {
	var steps []step
	for path != "" {
		switch path[0] {
		case '.':
			path = path[1:]
		case '[':
			end := strings.IndexByte(path, ']')
			if end < 0 {
				return nil, false
			}
			steps = append(steps, step{name: path[1:end], subscript: true})
			path = path[end+1:]
		default:
			end := strings.IndexAny(path, ".[")
			if end < 0 {
				end = len(path)
			}
			steps = append(steps, step{name: path[:end]})
			path = path[end:]
		}
	}
	return steps, len(steps) > 0
}

// lookup follows steps through Go values by their JSON names. It returns
// the zero Value, and true, where the path leads through a nil pointer, a
// missing key or an index out of range: the value is absent. It returns
// false where the path does not fit the type.
func lookup(v reflect.Value, steps []step) (reflect.Value, bool) {
	for _, s := range steps {
		for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
			if v.IsNil() {
				return reflect.Value{}, true
			}
			v = v.Elem()
		}
		switch {
		case !s.subscript && v.Kind() == reflect.Struct:
			f, ok := jsonField(v, s.name)
			if !ok {
				return reflect.Value{}, false
			}
			v = f
		case s.subscript && (v.Kind() == reflect.Slice || v.Kind() == reflect.Array):
			i, err := strconv.Atoi(s.name)
			if err != nil {
				return reflect.Value{}, false
			}
			if i < 0 || i >= v.Len() {
				return reflect.Value{}, true
			}
			v = v.Index(i)
		case s.subscript && v.Kind() == reflect.Map && v.Type().Key().Kind() == reflect.String:
			v = v.MapIndex(reflect.ValueOf(s.name).Convert(v.Type().Key()))
			if !v.IsValid() {
				return reflect.Value{}, true
			}
		default:
			return reflect.Value{}, false
		}
	}
	return v, true
}

// jsonField finds the field of a struct serialized under name, looking
// into inlined (embedded) structs such as ObjectMeta's.
func jsonField(v reflect.Value, name string) (reflect.Value, bool) {
	t := v.Type()
	for i := range t.NumField() {
		sf := t.Field(i)
		if !sf.IsExported() {
			continue
		}
		tag, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if tag == name {
			return v.Field(i), true
		}
		if sf.Anonymous && tag == "" && sf.Type.Kind() == reflect.Struct {
			if f, ok := jsonField(v.Field(i), name); ok {
				return f, true
			}
		}
	}
	return reflect.Value{}, false
}
