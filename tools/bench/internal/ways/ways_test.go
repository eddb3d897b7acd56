package ways

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	all := []string{"InPlaceRestart/process", "InPlaceRestart", "Recreate"}
	for _, tc := range []struct {
		list    string
		want    []string
		wantErr string
	}{
		{list: "Recreate, InPlaceRestart/process", want: []string{"InPlaceRestart/process", "Recreate"}},
		{list: "Recreate,Recreate", want: []string{"Recreate"}},
		{list: "InPlaceRestart/pod", wantErr: `"InPlaceRestart/pod" is none of InPlaceRestart/process, InPlaceRestart, Recreate`},
		{list: "", wantErr: `"" is none of`},
	} {
		got, err := Parse(tc.list, all)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("Parse(%q) = %v, %v; want an error with %q", tc.list, got, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.list, err)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("Parse(%q) (-want +got):\n%s", tc.list, diff)
		}
	}
}
