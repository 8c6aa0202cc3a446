package server

import (
	"bufio"
	"os"
	"strconv"
	"strings"
)

// Where the memory limit comes from, in order: the cgroup v2 limit, the cgroup v1 limit, physical
// memory. Variables so that tests can point them at fixtures.
var (
	cgroupV2MemoryMax = "/sys/fs/cgroup/memory.max"
	cgroupV1Limit     = "/sys/fs/cgroup/memory/memory.limit_in_bytes"
	procMeminfo       = "/proc/meminfo"
)

// noLimitBytes: cgroup v1 reports "no limit" as a number near MaxInt64 (page-rounded); anything
// above 1 PiB is treated as that.
const noLimitBytes = 1 << 50

// fallbackMemory is assumed when neither cgroups nor /proc/meminfo tell (not Linux).
const fallbackMemory = 4 << 30

// ContainerMemoryLimit returns the container's memory limit in bytes and where it came from
// ("cgroup v2", "cgroup v1"), or 0 and "" when the process runs without one.
func ContainerMemoryLimit() (int64, string) {
	if b, err := os.ReadFile(cgroupV2MemoryMax); err == nil {
		if v := strings.TrimSpace(string(b)); v != "max" {
			if n, err := strconv.ParseInt(v, 10, 64); err == nil && n > 0 && n < noLimitBytes {
				return n, "cgroup v2"
			}
		}
		return 0, ""
	}
	if b, err := os.ReadFile(cgroupV1Limit); err == nil {
		if n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && n > 0 && n < noLimitBytes {
			return n, "cgroup v1"
		}
	}
	return 0, ""
}

// physicalMemory is MemTotal of /proc/meminfo, or fallbackMemory.
func physicalMemory() int64 {
	f, err := os.Open(procMeminfo)
	if err != nil {
		return fallbackMemory
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
			fields := strings.Fields(v) // "24683548 kB"
			if len(fields) >= 1 {
				if kb, err := strconv.ParseInt(fields[0], 10, 64); err == nil && kb > 0 {
					return kb << 10
				}
			}
		}
	}
	return fallbackMemory
}

// DefaultMemoryBudget is three quarters of the container's memory limit (the rest is the
// daemon's own baseline, Go's GC headroom and the kernel's page cache for reads), or, without a
// limit, half of physical memory (the machine is shared with other processes).
func DefaultMemoryBudget() int64 {
	if n, _ := ContainerMemoryLimit(); n > 0 {
		return n / 4 * 3
	}
	return physicalMemory() / 2
}
