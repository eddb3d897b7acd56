package agentspec

import (
	"testing"
	"time"
)

func TestParseHangTimeouts(t *testing.T) {
	for _, c := range []struct {
		name        string
		annotations map[string]string
		want        HangTimeouts
		bad         []string
	}{
		{"none", nil, HangTimeouts{}, nil},
		{"both", map[string]string{FirstProgressTimeoutAnnotation: "15m", ProgressTimeoutAnnotation: "90s"}, HangTimeouts{15 * time.Minute, 90 * time.Second}, nil},
		{"not a duration", map[string]string{ProgressTimeoutAnnotation: "90"}, HangTimeouts{}, []string{ProgressTimeoutAnnotation}},
		{"too short", map[string]string{FirstProgressTimeoutAnnotation: "500ms", ProgressTimeoutAnnotation: "1s"}, HangTimeouts{Progress: time.Second}, []string{FirstProgressTimeoutAnnotation}},
		{"negative", map[string]string{ProgressTimeoutAnnotation: "-1m"}, HangTimeouts{}, []string{ProgressTimeoutAnnotation}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, errs := ParseHangTimeouts(c.annotations)
			if got != c.want {
				t.Errorf("timeouts = %+v, want %+v", got, c.want)
			}
			if len(errs) != len(c.bad) {
				t.Fatalf("errors = %v, want one for each of %v", errs, c.bad)
			}
			for i, e := range errs {
				if e.Annotation != c.bad[i] {
					t.Errorf("error %d names %s, want %s", i, e.Annotation, c.bad[i])
				}
			}
		})
	}
}
