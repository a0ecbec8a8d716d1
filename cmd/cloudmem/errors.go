package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/aws/smithy-go"

	"github.com/cloudmem/cloudmem/memory"
)

// describe returns the text of a failed command's error for a person: with
// --verbose the whole error, every line of it; otherwise one line with the
// cause that can be acted on. For a memory storage failure that is the
// store's error rather than the short cause the model reads; for an error
// of a cloud API its code and message, with a hint naming the setting to
// check. A *problemsError keeps its lines, one per problem.
func (a *app) describe(err error) string {
	if pe, ok := errors.AsType[*problemsError](err); ok {
		return pe.Error()
	}
	if me, ok := errors.AsType[*memory.Error](err); ok && me.Cause != nil {
		err = me.Cause
	}
	if a.verbose {
		return err.Error()
	}
	msg := err.Error()
	if api, ok := errors.AsType[smithy.APIError](err); ok {
		msg = api.ErrorCode() + ": " + api.ErrorMessage()
		if hint := apiHints[api.ErrorCode()]; hint != "" {
			msg += " (" + hint + ")"
		}
	}
	if line, _, cut := strings.Cut(msg, "\n"); cut {
		return line + " (--verbose shows the whole error)"
	}
	return msg
}

// apiHints are what to check after an error code of the S3 API.
var apiHints = map[string]string{
	"SignatureDoesNotMatch": "check AWS_SECRET_ACCESS_KEY",
	"InvalidAccessKeyId":    "check AWS_ACCESS_KEY_ID",
	"AccessDenied":          "check the credentials' permissions on the bucket",
	"NoSuchBucket":          "check the bucket name in the store URL",
	"ExpiredToken":          "renew AWS_SESSION_TOKEN",
}

// problemsError is the failure of a command that checked many items (files
// to copy or import) and found problems with some of them: each problem on a
// line of its own (at most maxProblems), then the outcome.
type problemsError struct {
	problems []string
	outcome  string
}

// maxProblems is how many problems are listed before the rest are summed
// up in one line.
const maxProblems = 20

func (e *problemsError) Error() string {
	var b strings.Builder
	for i, p := range e.problems {
		if i == maxProblems {
			fmt.Fprintf(&b, "... and %d more\n", len(e.problems)-i)
			break
		}
		b.WriteString(p)
		b.WriteByte('\n')
	}
	b.WriteString(e.outcome)
	return b.String()
}
