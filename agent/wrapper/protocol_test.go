package wrapper

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The agent and the wrapper of a Pod come from the images of one release,
// but an agent container can be upgraded under a running wrapper: changing
// a line's form is a breaking change of the protocol.
func TestLinesAreStable(t *testing.T) {
	for name, tc := range map[string]struct {
		msg  Message
		line string
	}{
		"state, waiting": {Message{Type: TypeState, State: StateWaiting}, `{"type":"state","state":"waiting"}`},
		"state, exited": {Message{Type: TypeState, State: StateExited, Attempt: 2, Code: Code(0)},
			`{"type":"state","state":"exited","attempt":2,"code":0}`},
		"started":  {Message{Type: TypeStarted, Attempt: 1, PID: 7}, `{"type":"started","attempt":1,"pid":7}`},
		"exited":   {Message{Type: TypeExited, Attempt: 1, Code: Code(3)}, `{"type":"exited","attempt":1,"code":3}`},
		"stopped":  {Message{Type: TypeStopped, Attempt: 1, Code: Code(137)}, `{"type":"stopped","attempt":1,"code":137}`},
		"error":    {Message{Type: TypeError, Reason: "no"}, `{"type":"error","reason":"no"}`},
		"start":    {Message{Type: TypeStart, Attempt: 2}, `{"type":"start","attempt":2}`},
		"stop":     {Message{Type: TypeStop, Grace: Duration(1500 * time.Millisecond)}, `{"type":"stop","grace":"1.5s"}`},
		"stop now": {Message{Type: TypeStop}, `{"type":"stop"}`},
		"exit":     {Message{Type: TypeExit, Code: Code(0)}, `{"type":"exit","code":0}`},
	} {
		t.Run(name, func(t *testing.T) {
			line, err := encode(tc.msg)
			if err != nil {
				t.Fatal(err)
			}
			if got := string(line); got != tc.line+"\n" {
				t.Errorf("encoded %q, want %q", got, tc.line+"\n")
			}
			back, err := decode(line)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.msg, back); diff != "" {
				t.Errorf("decoded differently (-sent +received):\n%s", diff)
			}
		})
	}
}

func TestDecodeRefuses(t *testing.T) {
	for name, line := range map[string]string{
		"not JSON":           "start",
		"no type":            `{"attempt":1}`,
		"an unknown field":   `{"type":"stop","grace_seconds":5}`,
		"negative grace":     `{"type":"stop","grace":"-1s"}`,
		"grace without unit": `{"type":"stop","grace":"30"}`,
		"grace as a number":  `{"type":"stop","grace":30}`,
	} {
		if m, err := decode([]byte(line)); err == nil {
			t.Errorf("%s: decoded %+v, want an error", name, m)
		}
	}
}
