package agentspec

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// The grammar of EpochAnnotation's value, shared by every reader and
// writer of the protocol: the agent formats its epoch with FormatEpoch, the
// controller reads every Pod's with ParseEpoch, and the agent's admission
// policy admits exactly the values ParseEpoch accepts (EpochPattern and
// MaxEpoch, in CEL).
const (
	// EpochPattern matches a canonical decimal integer from 1 up (no sign,
	// no space, no leading zero), at most ten digits.
	EpochPattern = "^[1-9][0-9]{0,9}$"
	// MaxEpoch is the largest epoch: the status fields are int32.
	MaxEpoch = math.MaxInt32
)

// ParseEpoch reads an EpochAnnotation value: a canonical decimal integer
// from 1 to MaxEpoch. The error says what is wrong with it.
func ParseEpoch(value string) (int32, error) {
	if value == "" || strings.Trim(value, "0123456789") != "" {
		return 0, errors.New("not a decimal int32")
	}
	if strings.Trim(value, "0") == "" {
		return 0, errors.New("below 1, the first epoch")
	}
	if value[0] == '0' {
		return 0, errors.New("not canonical: a leading zero")
	}
	e, err := strconv.ParseInt(value, 10, 64)
	if err != nil || len(value) > 10 || e > MaxEpoch {
		return 0, fmt.Errorf("above %d, the largest epoch", MaxEpoch)
	}
	return int32(e), nil
}

// FormatEpoch writes an epoch as EpochAnnotation's value.
func FormatEpoch(e int32) string {
	return strconv.FormatInt(int64(e), 10)
}
