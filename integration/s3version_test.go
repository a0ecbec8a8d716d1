package integration

import (
	"crypto/md5"
	"encoding/hex"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/memory"
	"github.com/cloudmem/cloudmem/storeurl"
)

// TestS3VersionsHaveNoQuotes checks the one spelling of an S3 version: the
// ETag without the quotes S3 sends it in. "cloudmem ls --json" prints the
// listed version as the bare MD5 (MinIO's ETag of a one-part upload), the
// handler's own versions have no quote either, and the listed version, the
// Stat version and the quoted form of earlier releases are all accepted
// back as a condition, while a stale one is refused.
func TestS3VersionsHaveNoQuotes(t *testing.T) {
	endpoint, bucket := s3Server(t)
	url := "s3://" + bucket + "/versions/" + uniquePrefix() + "?endpoint=" + endpoint + "&path_style=true&region=us-east-1"
	t.Cleanup(func() { emptyStore(t, url) })
	bin := buildCLI(t)
	content := []byte("one\ntwo\n")
	src := filepath.Join(t.TempDir(), "a.md")
	if err := os.WriteFile(src, content, 0o600); err != nil {
		t.Fatal(err)
	}
	runCLI(t, bin, "File created successfully at: /memories/notes/a.md\n", "put", "/memories/notes/a.md", src, "--store", url)

	ctx := t.Context()
	s, err := storeurl.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer blob.Close(s)
	h, err := memory.New(s, memory.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	files, err := h.Files(ctx, "/memories")
	if err != nil || len(files) != 1 {
		t.Fatalf("Files = %v, %v; want the one file", files, err)
	}
	sum := md5.Sum(content)
	listed := hex.EncodeToString(sum[:])
	want := `[{"path":"/memories/notes/a.md","size":8,"version":"` + listed + `","modified":"` +
		files[0].Modified.UTC().Format(time.RFC3339Nano) + `"}]` + "\n"
	runCLI(t, bin, want, "ls", "--json", "--store", url)

	// Each version the store hands out is accepted back, in either spelling.
	v2, err := h.Write(ctx, "/memories/notes/a.md", []byte("2\n"), listed)
	if err != nil {
		t.Fatalf("Write at the listed version %s: %v", listed, err)
	}
	if strings.Contains(v2, `"`) {
		t.Fatalf("Write returned the version %s, with quotes", v2)
	}
	etag, id, ok := strings.Cut(v2, "#")
	if !ok || len(etag) != 32 || len(id) != 32 {
		t.Fatalf("Write returned the version %s, want ETAG#WRITEID", v2)
	}
	v3, err := h.Write(ctx, "/memories/notes/a.md", []byte("3\n"), `"`+etag+`"#`+id)
	if err != nil {
		t.Fatalf("Write at the quoted form of %s: %v", v2, err)
	}
	if _, err := h.Write(ctx, "/memories/notes/a.md", []byte("4\n"), v2); !errors.Is(err, blob.ErrPrecondition) {
		t.Fatalf("Write at the stale version %s = %v, want a conflict", v2, err)
	}
	if _, err := h.Write(ctx, "/memories/notes/a.md", []byte("4\n"), v3); err != nil {
		t.Fatalf("Write at the version %s: %v", v3, err)
	}
}
