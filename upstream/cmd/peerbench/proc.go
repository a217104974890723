package main

import (
	"math"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// procStatusKB reads a kB field of /proc/self/status (VmRSS, VmHWM); 0 if unavailable.
func procStatusKB(field string) int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			words := strings.Fields(rest)
			if len(words) > 0 {
				v, _ := strconv.ParseInt(words[0], 10, 64)
				return v
			}
		}
	}
	return 0
}

// peakRSSKB is VmHWM, the process's peak resident set size in KiB.
func peakRSSKB() int64 { return procStatusKB("VmHWM") }

// processCPU is the user + system time of every thread of the process so far. The Rust side
// reads the same figure from /proc/self/stat; getrusage gives it with a finer resolution.
// Go's garbage collector runs on threads of its own, so the process figure (not one thread's)
// is what a workload costs.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// loadavg is the machine's 1-minute load average (context for wall-clock figures), 0 if
// unavailable (JSON has no NaN).
func loadavg() float64 {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	words := strings.Fields(string(data))
	if len(words) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(words[0], 64)
	return v
}

func round2(x float64) float64 { return math.Round(x*100) / 100 }

func millis(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }
