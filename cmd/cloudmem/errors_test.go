package main

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/aws/smithy-go"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/memory"
	"github.com/cloudmem/cloudmem/storeurl"
)

// failingStore fails every List and Get with err.
type failingStore struct {
	blob.Store
	err error
}

func (s failingStore) List(context.Context, string) iter.Seq2[blob.Info, error] {
	return func(yield func(blob.Info, error) bool) { yield(blob.Info{}, s.err) }
}

func (s failingStore) Get(context.Context, string, int64) ([]byte, blob.Info, error) {
	return nil, blob.Info{}, s.err
}

// signatureError is what the S3 backend returns for a wrong secret key.
var signatureError = fmt.Errorf("s3: listing \"\": operation error S3: ListObjectsV2, StatusCode: 403, RequestID: 1, api error: %w",
	&smithy.GenericAPIError{Code: "SignatureDoesNotMatch", Message: "The request signature we calculated does not match the signature you provided."})

func init() {
	storeurl.Register("failing", storeurl.Backend{Open: func(context.Context, *storeurl.Location) (blob.Store, error) {
		return failingStore{Store: mem.New(nil), err: signatureError}, nil
	}})
}

// TestStorageErrorForAPerson checks that a storage failure is one line with
// the cause and the setting to check, where today's handler text ("the
// storage backend returned an error") and its log line helped no one; with
// --verbose the whole error follows the handler's log.
func TestStorageErrorForAPerson(t *testing.T) {
	const line = "SignatureDoesNotMatch: The request signature we calculated does not match the signature you provided. (check AWS_SECRET_ACCESS_KEY)\n"
	runCases(t, "failing://", []cliCase{
		{args: []string{"ls"}, code: 1, stderr: "cloudmem ls: " + line},
		{args: []string{"view", "/memories/a.md"}, code: 1, stderr: "cloudmem view: " + line},
		{args: []string{"cat", "/memories/a.md"}, code: 1, stderr: "cloudmem cat: " + line},
		{args: []string{"export", "-"}, code: 1, stderr: "cloudmem export: " + line},
		{args: []string{"copy", "failing://", "mem://"}, code: 1, stderr: "cloudmem copy: SRC: " + strings.TrimSuffix(line, "\n") + " (0 files copied; run copy again to finish)\n"},
	})
	code, stdout, stderr := cloudmem([]string{"ls", "--verbose", "--store", "failing://"}, "", nil)
	logLine, errLine, _ := strings.Cut(stderr, "\n")
	if code != 1 || stdout != "" || !strings.Contains(logLine, `msg="memory: storage call failed" command=files path=/memories`) ||
		errLine != "cloudmem ls: "+signatureError.Error()+"\n" {
		t.Errorf("ls --verbose = %d\nstdout:\n%s\nstderr:\n%s\nwant 1, the handler's log line, then the whole error", code, stdout, stderr)
	}
}

func TestDescribe(t *testing.T) {
	quiet, verbose := &app{}, &app{verbose: true}
	storage := &memory.Error{Kind: memory.ErrStorage, Msg: "The memory storage failed: the storage backend returned an error", Cause: signatureError}
	azure := fmt.Errorf("azure: \"\": GET 404 ContainerNotFound: %w", &azcore.ResponseError{ErrorCode: "ContainerNotFound", StatusCode: 404})
	twoLines := errors.New("first line\nsecond line")
	for _, tc := range []struct {
		a    *app
		err  error
		want string
	}{
		{quiet, storage, "SignatureDoesNotMatch: The request signature we calculated does not match the signature you provided. (check AWS_SECRET_ACCESS_KEY)"},
		{verbose, storage, signatureError.Error()},
		{quiet, &memory.Error{Kind: memory.ErrNotFound, Msg: "The path /memories/a does not exist"}, "The path /memories/a does not exist"},
		{quiet, azure, `azure: "": GET 404 ContainerNotFound: ` + firstLine(azure.(interface{ Unwrap() error }).Unwrap().Error()) + " (check the container name in the store URL)"},
		{quiet, twoLines, "first line (--verbose shows the whole error)"},
		{verbose, twoLines, "first line\nsecond line"},
		{quiet, &problemsError{problems: []string{"a: x", "b: y"}, outcome: "nothing was imported"}, "a: x\nb: y\nnothing was imported"},
	} {
		if got := tc.a.describe(tc.err); got != tc.want {
			t.Errorf("describe(%q), verbose %v = %q, want %q", tc.err, tc.a.verbose, got, tc.want)
		}
	}
}
