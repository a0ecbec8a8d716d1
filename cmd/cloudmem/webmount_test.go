package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/cloudmem/cloudmem/blob"
)

// A --mount of the web console may name a store of the config file: it is
// opened as its URL would be, with one history (a second one on top would
// refuse every write's record), and each write is recorded once.
func TestWebMountByName(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, []byte("stores:\n  work: file://"+dir+"?history=on\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"CLOUDMEM_CONFIG": cfg}
	for i, mnt := range []string{"notes=file://" + dir + "?history=on", "notes=work"} {
		var stderr bytes.Buffer
		a := &app{stderr: &stderr, getenv: func(k string) string { return env[k] }, mounts: []string{mnt}}
		mounts, done, err := a.openWebMounts(context.Background(), readWrite)
		if err != nil {
			t.Fatalf("%s: %v", mnt, err)
		}
		ctx := context.Background()
		key := []string{"a.md", "b.md"}[i]
		if _, err := mounts[0].Store.Put(ctx, key, []byte("x\n"), blob.Cond{IfAbsent: true}); err != nil {
			t.Errorf("%s: put: %v", mnt, err)
		}
		vs, err := mounts[0].History.History(ctx, key)
		if err != nil || len(vs) != 1 {
			t.Errorf("%s: history %v, %v; want one version", mnt, vs, err)
		}
		done()
	}
}

// The web console refuses --mount stores that overlap, as every command
// does, before it opens any: nothing is created.
func TestWebMountOverlapRefused(t *testing.T) {
	dir := t.TempDir()
	a := &app{getenv: func(string) string { return "" }, mounts: []string{"a=" + dir + "/m", "b=file:" + dir + "/m/b?history=on"}}
	mounts, _, err := a.openWebMounts(context.Background(), readWrite)
	want := `mount "b" lies inside mount "a": a write through one would change the files of the other; give each a directory or prefix of its own`
	if err == nil || err.Error() != want || mounts != nil {
		t.Errorf("openWebMounts = %v, %v; want the error %q", mounts, err, want)
	}
	if entries, err := os.ReadDir(dir); err != nil || len(entries) != 0 {
		t.Errorf("the directory holds %v (%v); want nothing", entries, err)
	}
}
