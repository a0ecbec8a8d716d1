package memory

import (
	"strconv"
	"strings"
)

// This file holds every text the model reads, byte for byte as docs/spec.md gives
// them. Error texts are written here without the "Error: " prefix, which
// errorResult adds.

// commandList ends the unknown-command message.
const commandList = "view, create, str_replace, insert, delete, rename"

func msgInvalidInput(reason string) string { return "Invalid memory command input: " + reason }

func msgRequired(f string) string { return "Parameter `" + f + "` is required" }

func msgRequiredFor(f, command string) string {
	return "Parameter `" + f + "` is required for command `" + command + "`"
}

func msgMustBe(f string, k kind) string {
	switch k {
	case kindInt:
		return "Parameter `" + f + "` must be an integer"
	case kindInts:
		return "Parameter `" + f + "` must be an array of integers"
	}
	return "Parameter `" + f + "` must be a string"
}

func msgUnknownCommand(command string) string {
	return "Unknown memory command: " + command + ". Expected one of: " + commandList
}

func msgReadOnly(command string) string {
	return "The memory directory is read-only: " + command + " is not allowed"
}

// Paths.

func msgPrefix(path string) string { return "Path must start with /memories, got: " + path }
func msgEscape(path string) string { return "Path " + path + " would escape /memories directory" }
func msgChars(path string) string  { return "Path " + path + " contains invalid characters" }
func msgTooLong(path string) string {
	return "Path " + path + " is too long"
}
func msgReserved(path string) string { return "Path " + path + " is reserved" }

func msgNotExistValid(path string) string {
	return "The path " + path + " does not exist. Please provide a valid path."
}
func msgNotExist(path string) string { return "The path " + path + " does not exist" }
func msgNotAFile(path string) string { return "The path " + path + " is not a file." }
func msgNotUTF8(path string) string  { return "The file " + path + " is not a UTF-8 text file" }
func msgAncestorFile(key string) string {
	return "The path " + root + "/" + key + " is a file, not a directory"
}

// view.

const dirHeaderFront = "Here're the files and directories up to 2 levels deep in "
const dirHeaderBack = ", excluding hidden items and node_modules:\n"

func fileHeader(path string) string { return "Here's the content of " + path + " with line numbers:\n" }

func msgViewRange(a, b int64, path string, n int) string {
	return "Invalid `view_range` parameter: [" + itoa64(a) + ", " + itoa64(b) + "]. The file " + path +
		" has " + strconv.Itoa(n) + " lines"
}

func msgLineLimit(path string, max int) string {
	return "File " + path + " exceeds maximum line limit of " + withCommas(int64(max)) + " lines."
}

func noteTruncated(first, last, total int) string {
	return "\n[Output truncated: showing lines " + strconv.Itoa(first) + "-" + strconv.Itoa(last) + " of " +
		strconv.Itoa(total) + ". Use view_range to see more.]"
}

func noteListingTruncated(shown, total int) string {
	return "\n[Output truncated: showing " + strconv.Itoa(shown) + " of " + strconv.Itoa(total) +
		" entries. View a subdirectory to see the rest.]"
}

// msgImageTooBig is the image limit's text of docs/spec.md "view", "File".
func msgImageTooBig(path string, n, max int64) string {
	return "Image " + path + " is " + itoa64(n) + " bytes, over the limit of " + itoa64(max) + " bytes per image"
}

// create.

func msgCreated(path string) string { return "File created successfully at: " + path }
func msgExists(path string) string  { return "File " + path + " already exists" }

func msgTooBig(path string, n, max int64) string {
	return "File " + path + " would be " + itoa64(n) + " bytes, over the limit of " + itoa64(max) +
		" bytes per memory file"
}

func msgFull(n, max int) string {
	return "The memory directory is full: it holds " + strconv.Itoa(n) + " files, the limit is " +
		strconv.Itoa(max) + ". Delete or merge files first."
}

// str_replace.

// maxMatchLines is the most line numbers msgManyMatches lists.
const maxMatchLines = 100

// echo returns text the model sent, as an error text may quote it: whole
// up to limit code points, beyond that cut there and followed by "…". A
// negative limit keeps it whole.
func echo(text string, limit int) string {
	if limit < 0 || len(text) <= limit {
		return text
	}
	n := 0
	for i := range text {
		if n == limit {
			return text[:i] + "…"
		}
		n++
	}
	return text
}

const msgEmptyOldStr = "No replacement was performed, old_str must not be empty."

func msgNoMatch(oldStr, path string) string {
	return "No replacement was performed, old_str `" + oldStr + "` did not appear verbatim in " + path + "."
}

func msgManyMatches(oldStr string, lines []int) string {
	var b strings.Builder
	b.WriteString("No replacement was performed. Multiple occurrences of old_str `")
	b.WriteString(oldStr)
	b.WriteString("` in lines: ")
	for i, n := range lines[:min(len(lines), maxMatchLines)] {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(n))
	}
	if len(lines) > maxMatchLines {
		b.WriteString(", … (" + strconv.Itoa(len(lines)) + " in all)")
	}
	b.WriteString(". Please ensure it is unique")
	return b.String()
}

const snippetHeader = "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n"

// insert.

func msgInsertLine(line int64, n int) string {
	return "Invalid `insert_line` parameter: " + itoa64(line) +
		". It should be within the range of lines of the file: [0, " + strconv.Itoa(n) + "]"
}

func msgInserted(path string) string { return "The file " + path + " has been edited." }

// delete and rename.

const msgDeleteRoot = "Cannot delete the /memories directory itself"
const msgRenameRoot = "Cannot rename the /memories directory itself"

func msgDeleted(path string) string { return "Successfully deleted " + path }

func msgDestExists(newPath string) string { return "The destination " + newPath + " already exists" }

func msgIntoItself(oldPath, newPath string) string {
	return "Cannot move " + oldPath + " into itself (" + newPath + ")"
}

func msgRenamed(oldPath, newPath string) string {
	return "Successfully renamed " + oldPath + " to " + newPath
}

// All commands.

func msgConflict(path string) string {
	return "The file " + path + " was changed by another writer at the same time; no change was made. Try the command again."
}

func msgStorage(cause string) string { return "The memory storage failed: " + cause }

func itoa64(n int64) string { return strconv.FormatInt(n, 10) }
