package jobsetwebhook

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	"github.com/fastjobset/jobset/api/features"
	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/tools/testing/wrappers"
)

func TestValidateActiveDeadline(t *testing.T) {
	gateOn := features.Gates{}.With(features.JobSetActiveDeadlineSeconds, true)
	withDeadline := func(seconds *int64) *jobset.JobSet {
		js := wrappers.MakeJobSet("js", "ns").ReplicatedJob(wrappers.MakeReplicatedJob("workers").Obj()).Obj()
		js.Spec.ActiveDeadlineSeconds = seconds
		return js
	}
	for name, tc := range map[string]struct {
		js        *jobset.JobSet
		old       *jobset.JobSet
		gates     features.Gates
		want      []string
		wantInMsg []string
	}{
		"with the gate on": {
			js:    withDeadline(ptr.To[int64](600)),
			gates: gateOn,
		},
		"with the gate off (the default) names the flag": {
			js:        withDeadline(ptr.To[int64](600)),
			want:      []string{"FieldValueForbidden spec.activeDeadlineSeconds"},
			wantInMsg: []string{"--feature-gates=JobSetActiveDeadlineSeconds=true", "or remove the field"},
		},
		"without the field, the gate off": {
			js: withDeadline(nil),
		},
		"gate off: an update that adds the field": {
			js:   withDeadline(ptr.To[int64](600)),
			old:  withDeadline(nil),
			want: []string{"FieldValueForbidden spec.activeDeadlineSeconds"},
		},
		"gate off: a JobSet stored with the field stays updatable while the field is unchanged": {
			js:  withDeadline(ptr.To[int64](600)),
			old: withDeadline(ptr.To[int64](600)),
		},
		"gate on: the deadline may change": {
			js:    withDeadline(ptr.To[int64](1200)),
			old:   withDeadline(ptr.To[int64](600)),
			gates: gateOn,
		},
	} {
		t.Run(name, func(t *testing.T) {
			errs := Validate(tc.js, tc.gates)
			if tc.old != nil {
				errs = ValidateUpdate(tc.js, tc.old, tc.gates)
			}
			if diff := cmp.Diff(tc.want, fieldsOf(errs)); diff != "" {
				t.Fatalf("errors (-want +got):\n%s\n%v", diff, errs)
			}
			for _, part := range tc.wantInMsg {
				if !strings.Contains(errs.ToAggregate().Error(), part) {
					t.Errorf("%v lacks %q", errs, part)
				}
			}
		})
	}
}
