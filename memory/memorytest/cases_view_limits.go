package memorytest

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"strconv"
	"strings"

	"github.com/cloudmem/cloudmem/memory"
)

// view's limits: the line limit, truncation, and images. docs/spec.md "view".

func truncated(first, last, total int) string {
	return fmt.Sprintf("\n[Output truncated: showing lines %d-%d of %d. Use view_range to see more.]", first, last, total)
}

func viewLimitCases() []Case {
	c := append(lineLimitCases(), truncationCases()...)
	return append(c, imageCases()...)
}

func lineLimitCases() []Case {
	// 999,998 newlines and an x: 999,999 lines, the most a view shows.
	most := strings.Repeat("\n", 999_998) + "x"
	mostLines := make([]string, 2000)
	return []Case{
		{Name: "line limit: at the limit", Options: memory.Options{MaxLines: 3}, Files: files("/memories/f.md", "a\nb\nc"), Input: viewPath("/memories/f.md"),
			Want: ok(fileView("/memories/f.md", 1, "a", "b", "c"))},
		{Name: "line limit: over the limit", Options: memory.Options{MaxLines: 3}, Files: files("/memories/f.md", "a\nb\nc\nd"), Input: viewPath("/memories/f.md"),
			Want: fail("File /memories/f.md exceeds maximum line limit of 3 lines.")},
		{Name: "line limit: over the default", Files: files("/memories/big.md", strings.Repeat("\n", 1_000_000)), Input: viewPath("/memories/big.md"),
			Want: fail("File /memories/big.md exceeds maximum line limit of 999,999 lines.")},
		// Each of these lines is 7 code points ("     1\t"), so 2,000 of
		// them joined by "\n" make 15,999, within the default 16,000.
		{Name: "line limit: at the default, truncated", Files: files("/memories/big.md", most), Input: viewPath("/memories/big.md"),
			Want: ok(fileView("/memories/big.md", 1, mostLines...) + truncated(1, 2000, 999_999))},
	}
}

func truncationCases() []Case {
	three := files("/memories/f.md", "aaaa\nbbbb\ncccc")  // each numbered line is 11 code points
	five := files("/memories/f.md", "l1\nl2\nl3\nl4\nl5") // each numbered line is 9 code points
	limit := func(n int) memory.Options { return memory.Options{ViewLimit: n} }
	x := func(n int) string { return strings.Repeat("x", n) }
	return []Case{
		{Name: "truncation: exactly at the limit", Options: limit(35), Files: three, Input: viewPath("/memories/f.md"),
			Want: ok(fileView("/memories/f.md", 1, "aaaa", "bbbb", "cccc"))},
		{Name: "truncation: one under keeps two lines", Options: limit(34), Files: three, Input: viewPath("/memories/f.md"),
			Want: ok("Here's the content of /memories/f.md with line numbers:\n     1\taaaa\n     2\tbbbb\n[Output truncated: showing lines 1-2 of 3. Use view_range to see more.]")},
		{Name: "truncation: two lines exactly", Options: limit(23), Files: three, Input: viewPath("/memories/f.md"),
			Want: ok(fileView("/memories/f.md", 1, "aaaa", "bbbb") + truncated(1, 2, 3))},
		{Name: "truncation: the joining newline counts", Options: limit(22), Files: three, Input: viewPath("/memories/f.md"),
			Want: ok(fileView("/memories/f.md", 1, "aaaa") + truncated(1, 1, 3))},
		{Name: "truncation: first line exactly", Options: limit(11), Files: three, Input: viewPath("/memories/f.md"),
			Want: ok(fileView("/memories/f.md", 1, "aaaa") + truncated(1, 1, 3))},
		{Name: "truncation: first line alone over is cut, prefix included", Options: limit(8), Files: three, Input: viewPath("/memories/f.md"),
			Want: ok("Here's the content of /memories/f.md with line numbers:\n     1\ta" + truncated(1, 1, 3))},
		{Name: "truncation: cut inside the number prefix", Options: limit(4), Files: three, Input: viewPath("/memories/f.md"),
			Want: ok("Here's the content of /memories/f.md with line numbers:\n    " + truncated(1, 1, 3))},
		{Name: "truncation: the final empty line counts", Options: limit(11), Files: files("/memories/f.md", "aaaa\n"), Input: viewPath("/memories/f.md"),
			Want: ok(fileView("/memories/f.md", 1, "aaaa") + truncated(1, 1, 2))},
		{Name: "truncation: code points, not bytes", Options: limit(23), Files: files("/memories/f.md", "éééé\néééé"), Input: viewPath("/memories/f.md"),
			Want: ok(fileView("/memories/f.md", 1, "éééé", "éééé"))},
		{Name: "truncation: code points, one under", Options: limit(22), Files: files("/memories/f.md", "éééé\néééé"), Input: viewPath("/memories/f.md"),
			Want: ok(fileView("/memories/f.md", 1, "éééé") + truncated(1, 1, 2))},
		{Name: "truncation: cut between two-byte characters", Options: limit(9), Files: files("/memories/f.md", "ééééé\nx"), Input: viewPath("/memories/f.md"),
			Want: ok(fileView("/memories/f.md", 1, "éé") + truncated(1, 1, 2))},
		{Name: "truncation: cut between four-byte characters", Options: limit(8), Files: files("/memories/f.md", "\U0001F600\U0001F600\U0001F600"), Input: viewPath("/memories/f.md"),
			Want: ok(fileView("/memories/f.md", 1, "\U0001F600") + truncated(1, 1, 1))},
		{Name: "truncation: under a view_range, total is the file's", Options: limit(19), Files: five, Input: `{"command":"view","path":"/memories/f.md","view_range":[2,4]}`,
			Want: ok(fileView("/memories/f.md", 2, "l2", "l3") + truncated(2, 3, 5))},
		{Name: "truncation: a view_range that fits", Options: limit(19), Files: five, Input: `{"command":"view","path":"/memories/f.md","view_range":[4,-1]}`,
			Want: ok(fileView("/memories/f.md", 4, "l4", "l5"))},
		{Name: "truncation: under a view_range, first line cut", Options: limit(8), Files: five, Input: `{"command":"view","path":"/memories/f.md","view_range":[3,3]}`,
			Want: ok(fileView("/memories/f.md", 3, "l") + truncated(3, 3, 5))},
		{Name: "truncation: header path as sent", Options: limit(11), Files: three, Input: viewPath("/memories/./f.md"),
			Want: ok(fileView("/memories/./f.md", 1, "aaaa") + truncated(1, 1, 3))},
		{Name: "truncation: negative limit shows everything", Options: limit(-1), Files: files("/memories/f.md", x(20_000)), Input: viewPath("/memories/f.md"),
			Want: ok(fileView("/memories/f.md", 1, x(20_000)))},
		{Name: "truncation: default limit, exactly 16000", Files: files("/memories/f.md", x(15_993)), Input: viewPath("/memories/f.md"),
			Want: ok(fileView("/memories/f.md", 1, x(15_993)))},
		{Name: "truncation: default limit, one over", Files: files("/memories/f.md", x(15_994)), Input: viewPath("/memories/f.md"),
			Want: ok(fileView("/memories/f.md", 1, x(15_993)) + truncated(1, 1, 1))},
		// 1,000 lines of 10 x's: each numbered line is 17 code points;
		// 888 of them joined make 15,983, 889 would make 16,001.
		{Name: "truncation: default limit, many lines", Files: files("/memories/f.md", strings.TrimSuffix(strings.Repeat(x(10)+"\n", 1000), "\n")),
			Input: viewPath("/memories/f.md"), Want: ok(fileView("/memories/f.md", 1, repeatLine(x(10), 888)...) + truncated(1, 888, 1000))},
	}
}

func repeatLine(line string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = line
	}
	return out
}

// tinyImage is a 2x2 picture with four colours.
func tinyImage() image.Image {
	img := image.NewNRGBA(image.Rect(0, 0, 2, 2))
	img.Set(0, 0, color.NRGBA{R: 255, A: 255})
	img.Set(1, 0, color.NRGBA{G: 255, A: 255})
	img.Set(0, 1, color.NRGBA{B: 255, A: 255})
	img.Set(1, 1, color.NRGBA{R: 255, G: 255, B: 255, A: 128})
	return img
}

func encoded(encode func(*bytes.Buffer, image.Image) error) string {
	var b bytes.Buffer
	if err := encode(&b, tinyImage()); err != nil {
		panic(fmt.Sprintf("memorytest: encoding the test image: %v", err))
	}
	return b.String()
}

// padded returns data followed by zero bytes up to n bytes: still a PNG to
// content sniffing, of exactly the size a limit case needs.
func padded(data string, n int) string { return data + strings.Repeat("\x00", n-len(data)) }

// webpImage is a 1x1 lossless WebP. Only its RIFF/WEBP/VP8L header matters
// for content sniffing; the standard library has no WebP codec to make one.
const webpImage = "RIFF\x1a\x00\x00\x00WEBPVP8L\x0d\x00\x00\x00\x2f\x00\x00\x00\x10\x07\x10\x11\x11\x88\x88\xfe\x07\x00"

func imageCases() []Case {
	pngData := encoded(func(b *bytes.Buffer, m image.Image) error { return png.Encode(b, m) })
	jpegData := encoded(func(b *bytes.Buffer, m image.Image) error { return jpeg.Encode(b, m, nil) })
	gifData := encoded(func(b *bytes.Buffer, m image.Image) error { return gif.Encode(b, m, nil) })
	img := func(mediaType, data string) memory.Result {
		return memory.Result{Image: &memory.Image{MediaType: mediaType, Data: []byte(data)}}
	}
	pics := files("/memories/pic.png", pngData, "/memories/photo.jpg", jpegData, "/memories/photo.jpeg", jpegData,
		"/memories/anim.gif", gifData, "/memories/pic.webp", webpImage, "/memories/notes.png", "not an image\n",
		"/memories/pic.txt", pngData, "/memories/junk.png", "\xff\xfe\xfd", "/memories/d.png/x", "x")
	return []Case{
		{Name: "png", Files: pics, Input: viewPath("/memories/pic.png"), Want: img("image/png", pngData)},
		{Name: "jpg", Files: pics, Input: viewPath("/memories/photo.jpg"), Want: img("image/jpeg", jpegData)},
		{Name: "jpeg", Files: pics, Input: viewPath("/memories/photo.jpeg"), Want: img("image/jpeg", jpegData)},
		{Name: "gif", Files: pics, Input: viewPath("/memories/anim.gif"), Want: img("image/gif", gifData)},
		{Name: "webp", Files: pics, Input: viewPath("/memories/pic.webp"), Want: img("image/webp", webpImage)},
		{Name: "image path as sent", Files: pics, Input: viewPath("/memories//pic.png"), Want: img("image/png", pngData)},
		// Decided by name and confirmed by content sniffing: text named
		// .png is not an image, so it is shown as text.
		{Name: "text named .png is shown as text", Files: pics, Input: viewPath("/memories/notes.png"), Want: ok(fileView("/memories/notes.png", 1, "not an image", ""))},
		{Name: "binary named .png is not UTF-8", Files: pics, Input: viewPath("/memories/junk.png"), Want: fail(notUTF8("/memories/junk.png"))},
		{Name: "an image not named as one is not UTF-8", Files: pics, Input: viewPath("/memories/pic.txt"), Want: fail(notUTF8("/memories/pic.txt"))},
		{Name: "a directory named .png is listed", Files: pics, Input: viewPath("/memories/d.png"), Want: ok(listing("/memories/d.png", "1B\t/memories/d.png", "1B\t/memories/d.png/x"))},
		{Name: "image at the limit", Options: memory.Options{MaxImageBytes: int64(len(pngData))}, Files: pics, Input: viewPath("/memories/pic.png"), Want: img("image/png", pngData)},
		{Name: "image at the default limit", Files: files("/memories/big.png", padded(pngData, 5<<20)), Input: viewPath("/memories/big.png"), Want: img("image/png", padded(pngData, 5<<20))},
		{Name: "image over the default limit", Files: files("/memories/big.png", padded(pngData, 5<<20+1)), Input: viewPath("/memories/big.png"), Want: fail(""), WantPrefix: true},
		{Name: "image over the limit", Options: memory.Options{MaxImageBytes: int64(len(pngData)) - 1}, Files: pics, Input: viewPath("/memories/pic.png"),
			Want: fail("Image /memories/pic.png is " + strconv.Itoa(len(pngData)) + " bytes, over the limit of " +
				strconv.Itoa(len(pngData)-1) + " bytes per image")},
	}
}
