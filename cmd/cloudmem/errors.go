package main

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"

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
	if ne, ok := err.(*noteError); ok {
		return ne.prefix + a.describe(ne.err) + ne.suffix
	}
	if me, ok := errors.AsType[*memory.Error](err); ok && me.Cause != nil {
		err = me.Cause
	}
	if a.verbose {
		return err.Error()
	}
	msg := err.Error()
	if m, ok := describeNetwork(err); ok {
		return m
	}
	for _, describe := range apiErrorDescribers {
		if m, ok := describe(err); ok {
			msg = m
			break
		}
	}
	if line := firstLine(msg); line != msg {
		return line + " (--verbose shows the whole error)"
	}
	return msg
}

// describeNetwork words an error of a server that cannot be reached,
// whichever backend met it: the address, the reason and what to check,
// instead of the layers the error passed through.
func describeNetwork(err error) (string, bool) {
	if de, ok := errors.AsType[*net.DNSError](err); ok {
		return fmt.Sprintf("cannot find the storage server %s (%s): check the host of the store URL", de.Name, dnsReason(de)), true
	}
	oe, ok := errors.AsType[*net.OpError](err)
	if !ok || oe.Op != "dial" || oe.Addr == nil {
		return "", false
	}
	reason := "the connection failed"
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		reason = "connection refused"
	case oe.Timeout():
		reason = "no answer"
	}
	return fmt.Sprintf("cannot reach the storage server at %s (%s): check that it runs, and the host and port of the store URL", oe.Addr, reason), true
}

// dnsReason is the short reason of a failed lookup.
func dnsReason(de *net.DNSError) string {
	if de.IsNotFound {
		return "no such host"
	}
	return "the lookup failed"
}

// apiErrorDescribers turn the error of a cloud API into the line a person
// reads, with a hint from apiHints; each backend linked in (backend_*.go)
// adds its own, so that errors.go links no SDK.
var apiErrorDescribers []func(err error) (msg string, ok bool)

// firstLine returns s up to its first newline.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// apiHints are what to check after an error code of the S3 or the Azure
// Blob API.
var apiHints = map[string]string{
	// S3
	"SignatureDoesNotMatch": "check AWS_SECRET_ACCESS_KEY",
	"InvalidAccessKeyId":    "check AWS_ACCESS_KEY_ID",
	"AccessDenied":          "check the credentials' permissions on the bucket",
	"NoSuchBucket":          "check the bucket name in the store URL",
	"ExpiredToken":          "renew AWS_SESSION_TOKEN",
	"Forbidden":             "check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, and the credentials' permissions on the bucket",
	// Azure
	"ContainerNotFound":    "check the container name in the store URL",
	"AuthorizationFailure": "check the account key in AZURE_STORAGE_CONNECTION_STRING, and its permissions",
	"AuthenticationFailed": "check the account key in AZURE_STORAGE_CONNECTION_STRING",
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

// noteError is err with a note around it, for a person: prefix and suffix
// frame the description of err (see describe), whatever it becomes.
type noteError struct {
	prefix, suffix string
	err            error
}

func (e *noteError) Error() string { return e.prefix + e.err.Error() + e.suffix }
func (e *noteError) Unwrap() error { return e.err }
