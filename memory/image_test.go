package memory_test

import (
	"testing"

	"github.com/cloudmem/cloudmem/memory"
)

func TestImageType(t *testing.T) {
	for _, c := range []struct {
		path, data, want string
	}{
		{"/memories/a.png", "\x89PNG\r\n\x1a\nrest", "image/png"},
		{"/memories/a.JPG", "\xff\xd8\xffrest", "image/jpeg"},
		{"/memories/a.gif", "GIF89arest", "image/gif"},
		{"/memories/a.webp", "RIFF\x00\x00\x00\x00WEBPVP8 ", "image/webp"},
		{"/memories/a.png", "<svg onload=alert(1)>", ""},
		{"/memories/a.svg", "<svg/>", ""},
		{"/memories/a.md", "\x89PNG\r\n\x1a\nrest", ""},
	} {
		if got := memory.ImageType(c.path, []byte(c.data)); got != c.want {
			t.Errorf("ImageType(%q, %q) = %q, want %q", c.path, c.data, got, c.want)
		}
	}
}
