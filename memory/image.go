package memory

// ImageType returns the media type under which view returns the file at
// path with content data as an image (docs/spec.md: the name ends in .png,
// .jpg, .jpeg, .gif or .webp, any case, and the content sniffs as that
// format): "image/png", "image/jpeg", "image/gif" or "image/webp"; "" when
// view returns it as text. Programs that show files (a web console) use it
// to show the same files as images that the model sees as images.
func ImageType(path string, data []byte) string { return imageType(path, data) }
