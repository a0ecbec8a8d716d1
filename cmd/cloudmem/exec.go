package main

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/cloudmem/cloudmem/memory"
)

// maxLine is the longest command line exec accepts, newline excluded.
const maxLine = 16 << 20

// tooLongResult is the result for a line over maxLine, in the handler's wording
// for malformed input.
var tooLongResult = memory.InvalidInput(fmt.Sprintf("the input is longer than %d bytes", maxLine))

func init() { register(newExecCmd) }

// newExecCmd is "cloudmem exec": one memory command per input line, one
// result per output line, until EOF. A bad line gets its error result and
// the next line runs. At EOF exec exits 1 when any command failed on
// storage (memory.ErrStorage), saying how many, unless --exit-zero; other
// error results are the model's business. It exits 1 too when the store
// cannot be opened or stdin or stdout fails. Every command runs as the
// actor --actor names (default user@host), which the layers that record
// changes keep.
func newExecCmd(a *app) *cobra.Command {
	var actor string
	var exitZero bool
	cmd := &cobra.Command{
		Use:   "exec [--actor NAME] [--exit-zero] < commands.jsonl",
		Short: "Run memory commands read from stdin, one JSON object per line",
		Long: "Reads memory commands (the input JSON of a tool_use block), one per line, from stdin,\n" +
			"and writes one result per line to stdout, in the same order:\n" +
			`  {"content":"<text>","is_error":false}` + "\n" +
			"An image result's content is an array with one image block. A line that is not a valid\n" +
			"command gets an error result and the next line runs. Exit status 1 when a command failed on\n" +
			"storage (after the last result), unless --exit-zero.",
		Args: positional(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := a.withActor(cmd.Context(), actor)
			h, done, err := a.openHandler(ctx, readWrite, memory.Options{})
			if err != nil {
				return err
			}
			defer done()
			n, failed, err := a.exec(ctx, h)
			if err == nil && failed > 0 && !exitZero {
				err = fmt.Errorf("%d of %d commands failed on storage", failed, n)
			}
			return err
		},
	}
	addActorFlag(cmd, &actor)
	cmd.Flags().BoolVar(&exitZero, "exit-zero", false, "exit 0 even when commands failed on storage (the results say so)")
	return cmd
}

// exec runs the commands of stdin with h; see newExecCmd. It returns how
// many commands ran and how many of them failed on storage.
func (a *app) exec(ctx context.Context, h *memory.Handler) (n, failed int, err error) {
	in := bufio.NewReaderSize(a.stdin, 64<<10)
	out := bufio.NewWriter(a.stdout)
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	for {
		line, overLong, readErr := readLine(in, maxLine)
		if readErr != nil && !errors.Is(readErr, io.EOF) {
			return n, failed, fmt.Errorf("reading stdin: %w", readErr)
		}
		if len(line) > 0 || overLong || readErr == nil {
			res := tooLongResult
			if !overLong {
				res = h.Execute(ctx, line)
			}
			n++
			if errors.Is(res.Err, memory.ErrStorage) {
				failed++
			}
			if err := enc.Encode(wireResult(res)); err != nil {
				return n, failed, fmt.Errorf("writing stdout: %w", err)
			}
			// Flush each result: a caller on the other end of a pipe
			// waits for it before sending the next command.
			if err := out.Flush(); err != nil {
				return n, failed, fmt.Errorf("writing stdout: %w", err)
			}
		}
		if readErr != nil { // io.EOF
			return n, failed, nil
		}
	}
}

// readLine reads one line, without its '\n'. A line longer than max bytes
// is consumed to its end but not kept: readLine returns tooLong and no data.
// At the end of input it returns io.EOF together with the last, unterminated
// line (which may be empty).
func readLine(r *bufio.Reader, max int) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := r.ReadSlice('\n')
		if n := len(chunk); err == nil && n > 0 {
			chunk = chunk[:n-1] // the newline
		}
		if !tooLong {
			if len(line)+len(chunk) > max {
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return line, tooLong, err
		}
	}
}

// result is the JSON form of a memory.Result on exec's output.
type result struct {
	Content any  `json:"content"` // a string, or []imageBlock
	IsError bool `json:"is_error"`
}

// imageBlock is an image content block of the Messages API.
type imageBlock struct {
	Type   string      `json:"type"` // "image"
	Source imageSource `json:"source"`
}

type imageSource struct {
	Type      string `json:"type"` // "base64"
	MediaType string `json:"media_type"`
	Data      string `json:"data"`
}

func wireResult(r memory.Result) result {
	if r.Image == nil {
		return result{Content: r.Text, IsError: r.IsError}
	}
	return result{
		Content: []imageBlock{{
			Type: "image",
			Source: imageSource{
				Type:      "base64",
				MediaType: r.Image.MediaType,
				Data:      base64.StdEncoding.EncodeToString(r.Image.Data),
			},
		}},
		IsError: r.IsError,
	}
}
