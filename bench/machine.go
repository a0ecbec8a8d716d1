package main

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// machine describes the computer a run came from.
type machine struct {
	cpu    string // the CPU model
	cpus   int
	memory string // total memory
	os     string // OS, architecture and kernel release
	goVer  string
}

func readMachine() machine {
	m := machine{cpu: "unknown", cpus: runtime.NumCPU(), memory: "unknown", goVer: runtime.Version()}
	m.os = runtime.GOOS + "/" + runtime.GOARCH
	if rel, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.os += ", kernel " + strings.TrimSpace(string(rel))
	}
	if v := procField("/proc/cpuinfo", "model name"); v != "" {
		m.cpu = v
	}
	if v := procField("/proc/meminfo", "MemTotal"); v != "" {
		if kb, err := strconv.ParseInt(strings.TrimSuffix(v, " kB"), 10, 64); err == nil {
			m.memory = fmt.Sprintf("%.1f GiB", float64(kb)/(1<<20))
		}
	}
	return m
}

func (m machine) String() string {
	return fmt.Sprintf("%s, %d CPUs, %s memory, %s", m.cpu, m.cpus, m.memory, m.os)
}

// procField returns the value of the first "name: value" line of a /proc
// file, or "".
func procField(path, name string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == name {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// loadAverage returns the 1-, 5- and 15-minute load averages, or "unknown".
func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
