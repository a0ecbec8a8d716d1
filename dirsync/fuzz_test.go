package dirsync

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// FuzzLoadState feeds any bytes as the sync state file: loading must not
// panic, and a state it accepts saves and loads back the same.
func FuzzLoadState(f *testing.F) {
	f.Add([]byte(`{"format":1,"files":{"a.md":{"local_sha256":"ab","local_size":1,"local_mtime_ns":2}}}`))
	f.Add([]byte(`{"format":1}`))
	f.Add([]byte(`{"format":2,"files":{}}`))
	f.Add([]byte(`not json`))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		path := filepath.Join(dir, "state.json")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := loadState(path)
		if err != nil {
			return
		}
		if s.Files == nil {
			t.Fatal("an accepted state has no file map")
		}
		again := filepath.Join(dir, "again.json")
		if err := s.save(again); err != nil {
			t.Fatalf("an accepted state does not save: %v", err)
		}
		s2, err := loadState(again)
		if err != nil || !reflect.DeepEqual(s, s2) {
			t.Fatalf("the state changed in a round trip: %+v, %v", s2, err)
		}
	})
}
