// Package procstat reads a process's CPU time and memory from /proc.
package procstat

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// ticksPerSecond is USER_HZ, the unit of /proc/<pid>/stat's CPU times on
// Linux.
const ticksPerSecond = 100

// CPUSeconds is the process's user + system CPU time.
func CPUSeconds(pid int) (float64, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The fields after the command name (which may hold spaces and
	// parentheses) start with the state; utime and stime are the 12th and
	// 13th of them.
	s := string(raw)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	if len(fields) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields after the command", pid, len(fields))
	}
	utime, err := strconv.ParseFloat(fields[11], 64)
	if err != nil {
		return 0, err
	}
	stime, err := strconv.ParseFloat(fields[12], 64)
	return (utime + stime) / ticksPerSecond, err
}

// MiB reads a memory line of /proc/<pid>/status, such as "VmRSS" or
// "VmHWM" (the peak resident set), in MiB.
func MiB(pid int, field string) (float64, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 64)
			return kb / 1024, err
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", field, pid)
}
