package main

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionLine(t *testing.T) {
	for _, tc := range []struct {
		info *debug.BuildInfo
		want string
	}{
		{nil, "cloudmem (unknown version)"},
		{&debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "v1.2.0"}}, "cloudmem v1.2.0 (go1.26.0)"},
		{&debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs", Value: "git"},
			{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
			{Key: "vcs.modified", Value: "true"},
		}}, "cloudmem (devel) revision 0123456789ab, modified (go1.26.0)"},
		{&debug.BuildInfo{Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc"}, {Key: "vcs.modified", Value: "false"}}},
			"cloudmem (devel) revision abc"},
	} {
		if got := versionLine(tc.info); got != tc.want {
			t.Errorf("versionLine(%+v) = %q, want %q", tc.info, got, tc.want)
		}
	}
}

func TestVersion(t *testing.T) {
	info, _ := debug.ReadBuildInfo()
	want := versionLine(info) + "\n"
	code, stdout, stderr := cloudmem([]string{"version"}, "", nil)
	if code != 0 || stdout != want || stderr != "" || !strings.HasPrefix(stdout, "cloudmem ") {
		t.Errorf("version = %d\nstdout:\n%s\nstderr:\n%s\nwant 0 and stdout:\n%s", code, stdout, stderr, want)
	}
}
