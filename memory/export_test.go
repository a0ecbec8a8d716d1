package memory

import (
	"strings"
	"testing"

	"github.com/cloudmem/cloudmem/blob"
)

// Names that tests of package memory_test reach into: the keys of the
// gate's own bookkeeping (gate/count.go, gate/clash.go), which it does not
// export. TestBookkeepingNames keeps them true.

const (
	FileCountKey = blob.ReservedName + "/files"
	WitnessDir   = blob.ReservedName + "/names"
)

// IsWitness reports whether key is a witness of a name, at the root or in
// a mount.
func IsWitness(key string) bool {
	if strings.HasPrefix(key, WitnessDir+"/") {
		return true
	}
	_, rest, ok := strings.Cut(key, "/")
	return ok && strings.HasPrefix(rest, WitnessDir+"/")
}

// The names above are the gate's: each is bookkeeping to it, and the
// names beside them are not.
func TestBookkeepingNames(t *testing.T) {
	for key, want := range map[string]bool{
		FileCountKey:                true,
		"team/" + FileCountKey:      true,
		WitnessDir + "/d-0a":        true,
		"team/" + WitnessDir + "/w": true,
		FileCountKey + "x":          false,
		WitnessDir + "x/d":          false,
		"notes/a.md":                false,
	} {
		if got := IsBookkeeping(key); got != want || IsWitness(key) != (want && strings.Contains(key, WitnessDir)) {
			t.Errorf("IsBookkeeping(%q) = %v, IsWitness %v; want %v", key, got, IsWitness(key), want)
		}
	}
}
