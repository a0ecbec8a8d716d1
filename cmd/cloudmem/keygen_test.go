package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloudmem/cloudmem/crypt"
)

func TestKeygen(t *testing.T) {
	dir := t.TempDir()
	path, recipient := newKey(t, dir, "id.txt")
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode() != 0o600 {
		t.Errorf("%s has mode %v, want -rw-------", path, info.Mode())
	}
	content, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := crypt.ParseIdentities(string(content))
	if err != nil || len(ids) != 1 {
		t.Fatalf("the identity file does not parse: %v", err)
	}
	rcpts, err := crypt.ParseRecipients(recipient)
	if err != nil {
		t.Fatal(err)
	}
	if err := (crypt.Config{Identities: ids, Recipients: rcpts}).Validate(); err != nil {
		t.Errorf("the printed recipient is not the identity's: %v", err)
	}

	runCases(t, "mem://", []cliCase{
		{args: []string{"keygen", "-o", path}, code: 1,
			stderr: "cloudmem keygen: " + path + " already exists; keygen never overwrites a key\n"},
		{args: []string{"keygen", "-o", filepath.Join(dir, "missing", "id.txt")}, code: 1,
			stderr: "cloudmem keygen: open " + filepath.Join(dir, "missing", "id.txt") + ": no such file or directory\n"},
	})
	if again, err := os.ReadFile(path); err != nil || string(again) != string(content) {
		t.Errorf("a refused keygen changed %s", path)
	}

	pq := filepath.Join(dir, "pq.txt")
	code, stdout, stderr := cloudmem([]string{"keygen", "--post-quantum", "-o", pq}, "", nil)
	if code != 0 || !strings.HasPrefix(stdout, "age1pq1") || stderr != "" {
		t.Errorf("keygen --post-quantum = %d\nstdout:\n%s\nstderr:\n%s\nwant 0 and an age1pq1 recipient", code, stdout, stderr)
	}
}

// TestKeygenStdout: -o - writes the identity to stdout and the recipient to
// stderr, and no file named "-".
func TestKeygenStdout(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	code, stdout, stderr := cloudmem([]string{"keygen", "-o", "-"}, "", nil)
	if code != 0 {
		t.Fatalf("keygen -o - = %d, %q", code, stderr)
	}
	ids, err := crypt.ParseIdentities(stdout)
	if err != nil || len(ids) != 1 {
		t.Fatalf("stdout is no identity: %v\n%s", err, stdout)
	}
	recipient, ok := strings.CutPrefix(stderr, "Public key: ")
	if !ok || !strings.HasPrefix(recipient, "age1") || strings.Count(stderr, "\n") != 1 || !strings.HasSuffix(stderr, "\n") {
		t.Fatalf("stderr = %q, want one line \"Public key: age1...\"", stderr)
	}
	rcpts, err := crypt.ParseRecipients(strings.TrimSuffix(recipient, "\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := (crypt.Config{Identities: ids, Recipients: rcpts}).Validate(); err != nil {
		t.Errorf("the printed recipient is not the identity's: %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("keygen -o - left %d files in the directory", len(entries))
	}
}
