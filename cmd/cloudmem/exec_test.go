package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"image"
	"image/png"
	"io"
	"strings"
	"testing"

	"github.com/cloudmem/cloudmem/blob"
)

// TestExecSession runs several commands in one exec, bad lines among them:
// each line gets exactly one result line, in order, and exec exits 0.
func TestExecSession(t *testing.T) {
	stdin := strings.Join([]string{
		`{"command":"create","path":"/memories/a.md","file_text":"x < y && y > z\n"}`,
		`{bad`,
		``,
		`{"command":"view","path":"/memories/a.md"}`,
		`["view"]`,
		`{"command":"view","path":"/memories/missing.md"}`,
		`{"command":"str_replace","path":"/memories/a.md","old_str":"x","new_str":"w"}`, // no final newline
	}, "\n")
	want := `{"content":"File created successfully at: /memories/a.md","is_error":false}
{"content":"Error: Invalid memory command input: the input is not valid JSON","is_error":true}
{"content":"Error: Invalid memory command input: the input is empty","is_error":true}
{"content":"Here's the content of /memories/a.md with line numbers:\n     1\tx < y && y > z\n     2\t","is_error":false}
{"content":"Error: Invalid memory command input: the input is not a JSON object","is_error":true}
{"content":"Error: The path /memories/missing.md does not exist. Please provide a valid path.","is_error":true}
{"content":"The memory file has been edited. Here is the snippet showing the change (with line numbers):\n     1\tw < y && y > z\n     2\t","is_error":false}
`
	code, stdout, stderr := cloudmem([]string{"--store", "mem://", "exec"}, stdin, nil)
	if code != 0 || stdout != want || stderr != "" {
		t.Errorf("exec = %d\nstdout:\n%s\nstderr:\n%s\nwant 0 and stdout:\n%s", code, stdout, stderr, want)
	}
}

// TestExecLineEnds checks which inputs make result lines: every line ended by
// a newline (blank ones too), and a last line without one unless it is empty.
func TestExecLineEnds(t *testing.T) {
	const root = `{"command":"view","path":"/memories"}`
	const rootResult = `{"content":"Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n0B\t/memories","is_error":false}` + "\n"
	const empty = `{"content":"Error: Invalid memory command input: the input is empty","is_error":true}` + "\n"
	for _, tc := range []struct{ stdin, want string }{
		{"", ""},
		{"\n", empty},
		{root, rootResult},
		{root + "\n", rootResult},
		{root + "\n\n", rootResult + empty},
		{"\n" + root + "\n" + root, empty + rootResult + rootResult},
	} {
		code, stdout, stderr := cloudmem([]string{"--store", "mem://", "exec"}, tc.stdin, nil)
		if code != 0 || stdout != tc.want || stderr != "" {
			t.Errorf("exec with stdin %q = %d\nstdout:\n%s\nstderr:\n%s\nwant 0 and stdout:\n%s", tc.stdin, code, stdout, stderr, tc.want)
		}
	}
}

// TestExecLongLines checks the line limit: a line of maxLine bytes is
// executed, a longer one gets an error result, and the next line still runs.
func TestExecLongLines(t *testing.T) {
	atLimit := strings.Repeat("x", maxLine)
	over := strings.Repeat("y", maxLine+1)
	stdin := atLimit + "\n" + over + "\n" + `{"command":"delete","path":"/memories"}` + "\n" + over
	tooLong := `{"content":"Error: Invalid memory command input: the input is longer than 16777216 bytes","is_error":true}` + "\n"
	want := `{"content":"Error: Invalid memory command input: the input is not valid JSON","is_error":true}` + "\n" +
		tooLong +
		`{"content":"Error: Cannot delete the /memories directory itself","is_error":true}` + "\n" +
		tooLong
	code, stdout, stderr := cloudmem([]string{"--store", "mem://", "exec"}, stdin, nil)
	if code != 0 || stdout != want || stderr != "" {
		t.Errorf("exec = %d\nstdout:\n%s\nstderr:\n%s\nwant 0 and stdout:\n%s", code, stdout, stderr, want)
	}
}

func TestReadLine(t *testing.T) {
	type line struct {
		text    string
		tooLong bool
		err     error
	}
	for _, tc := range []struct {
		in   string
		max  int
		want []line
	}{
		{"", 4, []line{{"", false, io.EOF}}},
		{"abcd\nabcde\nab", 4, []line{{"abcd", false, nil}, {"", true, nil}, {"ab", false, io.EOF}}},
		{"abcde", 4, []line{{"", true, io.EOF}}},
		{"\n\r\n", 4, []line{{"", false, nil}, {"\r", false, nil}, {"", false, io.EOF}}},
		// Lines longer than the reader's 16-byte buffer.
		{strings.Repeat("a", 40) + "\n" + strings.Repeat("b", 41) + "\nc", 40,
			[]line{{strings.Repeat("a", 40), false, nil}, {"", true, nil}, {"c", false, io.EOF}}},
	} {
		r := bufio16(tc.in)
		var got []line
		for {
			text, tooLong, err := readLine(r, tc.max)
			got = append(got, line{string(text), tooLong, err})
			if err != nil {
				break
			}
		}
		if len(got) != len(tc.want) {
			t.Errorf("readLine over %q: %+v, want %+v", tc.in, got, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("readLine over %q, line %d: %+v, want %+v", tc.in, i, got[i], tc.want[i])
			}
		}
	}
}

// TestExecImage checks the image form of a result: an array with one image
// content block.
func TestExecImage(t *testing.T) {
	var pic bytes.Buffer
	if err := png.Encode(&pic, image.NewGray(image.Rect(0, 0, 1, 1))); err != nil {
		t.Fatal(err)
	}
	name := storeName(t)
	if _, err := sharedStore(name).Put(context.Background(), "pic.png", pic.Bytes(), blob.Cond{}); err != nil {
		t.Fatal(err)
	}
	want := `{"content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"` +
		base64.StdEncoding.EncodeToString(pic.Bytes()) + `"}}],"is_error":false}` + "\n"
	code, stdout, stderr := cloudmem([]string{"--store", "shared://" + name, "exec"}, `{"command":"view","path":"/memories/pic.png"}`, nil)
	if code != 0 || stdout != want || stderr != "" {
		t.Errorf("exec = %d\nstdout:\n%s\nstderr:\n%s\nwant 0 and stdout:\n%s", code, stdout, stderr, want)
	}
}

// TestExecIOErrors checks that a failing stdin or stdout ends exec with exit 1.
func TestExecIOErrors(t *testing.T) {
	const cmd = `{"command":"view","path":"/memories"}` + "\n"
	broken := errors.New("broken pipe")

	var errOut strings.Builder
	code := run([]string{"--store", "mem://", "exec"}, io.MultiReader(strings.NewReader(cmd), errReader{broken}),
		io.Discard, &errOut, func(string) string { return "" })
	if want := "cloudmem exec: reading stdin: broken pipe\n"; code != 1 || errOut.String() != want {
		t.Errorf("exec with a failing stdin = %d, stderr %q; want 1, %q", code, errOut.String(), want)
	}

	errOut.Reset()
	code = run([]string{"--store", "mem://", "exec"}, strings.NewReader(cmd), errWriter{broken}, &errOut,
		func(string) string { return "" })
	if want := "cloudmem exec: writing stdout: broken pipe\n"; code != 1 || errOut.String() != want {
		t.Errorf("exec with a failing stdout = %d, stderr %q; want 1, %q", code, errOut.String(), want)
	}
}

// bufio16 returns a reader over s with the smallest buffer bufio allows.
func bufio16(s string) *bufio.Reader { return bufio.NewReaderSize(strings.NewReader(s), 16) }

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

type errWriter struct{ err error }

func (w errWriter) Write([]byte) (int, error) { return 0, w.err }

// TestExecExitStatus: exit status 1 after the last result when a command
// failed on storage, with the count; --exit-zero keeps 0; error results
// that are not storage failures keep 0.
func TestExecExitStatus(t *testing.T) {
	const input = `{"command":"view","path":"/memories"}` + "\n" + `not json` + "\n" + `{"command":"view","path":"/memories/a.md"}` + "\n"
	code, stdout, stderr := cloudmem([]string{"exec", "--store", "failing://"}, input, nil)
	wantOut := `{"content":"Error: The memory storage failed: the storage backend returned an error","is_error":true}` + "\n" +
		`{"content":"Error: Invalid memory command input: the input is not valid JSON","is_error":true}` + "\n" +
		`{"content":"Error: The memory storage failed: the storage backend returned an error","is_error":true}` + "\n"
	if code != 1 || stdout != wantOut || stderr != "cloudmem exec: 2 of 3 commands failed on storage\n" {
		t.Errorf("exec on a failing store = %d\n%s%q\nwant 1\n%s%q", code, stdout, stderr, wantOut, "cloudmem exec: 2 of 3 commands failed on storage\n")
	}
	code, stdout2, stderr := cloudmem([]string{"exec", "--exit-zero", "--store", "failing://"}, input, nil)
	if code != 0 || stdout2 != wantOut || stderr != "" {
		t.Errorf("exec --exit-zero = %d\n%s%q; want 0, the same results, no stderr", code, stdout2, stderr)
	}
	code, _, stderr = cloudmem([]string{"exec", "--store", "shared://" + storeName(t)}, `{"command":"view","path":"/memories/none"}`+"\n"+"bad\n", nil)
	if code != 0 || stderr != "" {
		t.Errorf("exec with error results that are not storage failures = %d, %q; want 0", code, stderr)
	}
}
