package azure

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	azblob "github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/internal/objmeta"
)

// ConnectionStringEnv is the environment variable Open reads a connection
// string from when Options has neither Client nor ConnectionString.
const ConnectionStringEnv = "AZURE_STORAGE_CONNECTION_STRING"

// Options configures Open. The zero value uses AZURE_STORAGE_CONNECTION_STRING
// when it is set, and otherwise needs Account or Endpoint.
type Options struct {
	// Client is the container client to use, as configured by the caller
	// (credential, retries, transport). Nil means a client built from the
	// fields below, which must be empty when Client is set.
	Client *container.Client

	// ConnectionString is a storage account connection string (with an
	// AccountKey or a SharedAccessSignature). Empty means the value of
	// AZURE_STORAGE_CONNECTION_STRING; when that is empty too, the store
	// uses DefaultAzureCredential against Endpoint or Account.
	ConnectionString string

	// Account is the storage account name. Empty means the connection
	// string's account, or the one Endpoint names.
	Account string

	// Endpoint is the account's blob service URL, such as
	// https://NAME.blob.core.chinacloudapi.cn or, for Azurite,
	// http://127.0.0.1:10000/devstoreaccount1. Empty means the connection
	// string's, or https://ACCOUNT.blob.core.windows.net.
	Endpoint string

	// Timeout is the deadline of each storage call (see blob.WithTimeout):
	// a call the server has not answered by then fails with
	// blob.ErrTimeout. Zero means blob.DefaultTimeout (30s). The URL
	// parameter timeout= sets it.
	Timeout time.Duration
}

// Open returns a store over the blobs of the container named containerName
// under prefix: store key k is blob prefix+"/"+k (k itself when prefix is
// empty), with the escapes described in the package documentation. prefix
// may have leading and trailing slashes, which are ignored; otherwise it
// must be empty or a valid blob key. When opts.Client is set, containerName
// may be empty (the client's container) or must be the client's container.
// A nil opts means the zero Options.
//
// Open makes no request: a missing container or a credential problem shows
// in the first call. The store is safe for concurrent use.
func Open(ctx context.Context, containerName, prefix string, opts *Options) (blob.Store, error) {
	if opts == nil {
		opts = &Options{}
	}
	prefix = strings.Trim(prefix, "/")
	dir := ""
	if prefix != "" {
		if err := blob.CheckKey(prefix); err != nil {
			return nil, fmt.Errorf("azure: prefix: %w", err)
		}
		dir = escape(prefix) + "/"
	}
	client := opts.Client
	if client != nil {
		if opts.ConnectionString != "" || opts.Account != "" || opts.Endpoint != "" {
			return nil, errors.New("azure: Options.Client is set: leave ConnectionString, Account and Endpoint empty and configure the client instead")
		}
		if name := clientContainer(client); containerName != "" && containerName != name {
			return nil, fmt.Errorf("azure: container %q differs from the client's container %q", containerName, name)
		}
	} else {
		if err := checkContainer(containerName); err != nil {
			return nil, err
		}
		var err error
		if client, err = newClient(containerName, opts); err != nil {
			return nil, err
		}
	}
	return blob.WithTimeout(&store{client: client, dir: dir}, opts.Timeout), nil
}

// metaWriteID is the metadata name (header x-ms-meta-cloudmemwrite) holding
// the random id of the Put that wrote the blob. Azure metadata names must
// be C# identifiers, hence no separator.
const metaWriteID = "cloudmemwrite"

// pageSize is how many names one List Blobs request asks for.
const pageSize = 1000

// store implements blob.Store over one container.
type store struct {
	client *container.Client
	dir    string // the escaped prefix with a trailing '/', or ""
}

// blobName checks ctx and key and returns the key's blob name.
func (s *store) blobName(ctx context.Context, key string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if err := blob.CheckKey(key); err != nil {
		return "", err
	}
	name := s.dir + escape(key)
	if n := nameLen(name); n > maxNameLen {
		return "", fmt.Errorf("%w: the blob name would be %d characters with the store prefix, over Azure's %d", blob.ErrInvalidKey, n, maxNameLen)
	}
	return name, nil
}

func (s *store) Get(ctx context.Context, key string, limit int64) ([]byte, blob.Info, error) {
	name, err := s.blobName(ctx, key)
	if err != nil {
		return nil, blob.Info{}, err
	}
	if err := blob.CheckLimit(limit); err != nil {
		return nil, blob.Info{}, err
	}
	resp, err := s.client.NewBlobClient(name).DownloadStream(ctx, nil)
	if err != nil {
		return nil, blob.Info{}, mapErr(key, err)
	}
	defer resp.Body.Close()
	size := int64(-1)
	if resp.ContentLength != nil {
		size = *resp.ContentLength
	}
	data, err := blob.ReadLimited(resp.Body, key, size, limit)
	if errors.Is(err, blob.ErrTooLarge) {
		return nil, blob.Info{}, err
	}
	if err != nil {
		return nil, blob.Info{}, fmt.Errorf("azure: %q: reading: %w", key, err)
	}
	return data, newInfo(key, int64(len(data)), resp.ETag, resp.LastModified), nil
}

func (s *store) Stat(ctx context.Context, key string) (blob.Info, error) {
	name, err := s.blobName(ctx, key)
	if err != nil {
		return blob.Info{}, err
	}
	info, _, err := s.properties(ctx, key, name)
	return info, err
}

// properties returns the Info and the write id of blob name (store key key).
func (s *store) properties(ctx context.Context, key, name string) (blob.Info, string, error) {
	resp, err := s.client.NewBlobClient(name).GetProperties(ctx, nil)
	if err != nil {
		return blob.Info{}, "", mapErr(key, err)
	}
	var size int64
	if resp.ContentLength != nil {
		size = *resp.ContentLength
	}
	return newInfo(key, size, resp.ETag, resp.LastModified), metaValue(resp.Metadata, metaWriteID), nil
}

// Put uploads data as one block blob, tagged with a fresh write id.
func (s *store) Put(ctx context.Context, key string, data []byte, c blob.Cond) (blob.Info, error) {
	name, err := s.blobName(ctx, key)
	if err != nil {
		return blob.Info{}, err
	}
	if err := c.Validate(); err != nil {
		return blob.Info{}, err
	}
	if c.IfVersion != "" && !validVersion(c.IfVersion) {
		return blob.Info{}, fmt.Errorf("azure: %q: %w: %q is not a version of this store", key, blob.ErrPrecondition, c.IfVersion)
	}
	id := objmeta.NewWriteID()
	opts := &blockblob.UploadOptions{
		Metadata:    map[string]*string{metaWriteID: &id},
		HTTPHeaders: &azblob.HTTPHeaders{BlobContentType: ptr(objmeta.ContentType(data))},
	}
	if cond := accessConditions(c); cond != nil {
		opts.AccessConditions = &azblob.AccessConditions{ModifiedAccessConditions: cond}
	}
	if opts.AccessConditions == nil {
		resp, err := s.upload(ctx, name, data, opts)
		if err != nil {
			return blob.Info{}, mapErr(key, err)
		}
		return newInfo(key, int64(len(data)), resp.ETag, resp.LastModified), nil
	}
	return s.putConditional(ctx, key, name, data, opts, id, c)
}

// upload sends one Put Blob of data.
func (s *store) upload(ctx context.Context, name string, data []byte, opts *blockblob.UploadOptions) (blockblob.UploadResponse, error) {
	return s.client.NewBlockBlobClient(name).Upload(ctx, streaming.NopCloser(bytes.NewReader(data)), opts)
}

// condAttempts is how many times putConditional sends a conditional write
// whose earlier attempts failed in transit and provably did not land.
const condAttempts = 4

// putConditional sends the conditional write, with the SDK's retries off,
// and sends it again itself.
//
// The SDK's own retries cannot be told apart from a rival: when an attempt
// landed but its answer was lost, and a rival's write landed on top of it
// before the SDK's retry, that retry fails its condition and the blob holds
// the rival's write id, which looks like a plain conflict; the caller would
// then apply its change again over content that holds it
// (docs/netfaults.md). So after an attempt fails in transit, the store
// reads the blob: its own write id means the write landed; the blob still
// in the state the condition asks for (absent, or at the version c names)
// means it did not, and the write is sent again; anything else means the
// outcome is unknown, which is what the caller is told. A failed condition
// is a conflict (blob.ErrPrecondition) only on the first attempt, or when
// the store's own write is not there.
func (s *store) putConditional(ctx context.Context, key, name string, data []byte, opts *blockblob.UploadOptions, id string, c blob.Cond) (blob.Info, error) {
	once := policy.WithRetryOptions(ctx, policy.RetryOptions{MaxRetries: -1})
	backoff := 100 * time.Millisecond
	for attempt := 1; ; attempt++ {
		resp, err := s.upload(once, name, data, opts)
		if err == nil {
			return newInfo(key, int64(len(data)), resp.ETag, resp.LastModified), nil
		}
		failed := bloberror.HasCode(err, bloberror.BlobAlreadyExists, bloberror.ConditionNotMet) ||
			c.IfVersion != "" && bloberror.HasCode(err, bloberror.BlobNotFound)
		if !failed && (!transient(err) || ctx.Err() != nil) {
			return blob.Info{}, mapErr(key, err)
		}
		info, owner, perr := s.properties(ctx, key, name)
		missing := errors.Is(perr, blob.ErrNotExist)
		switch {
		case perr == nil && owner == id:
			return info, nil // an attempt landed
		case perr != nil && !missing:
			return blob.Info{}, fmt.Errorf("azure: %q: the write's outcome is unknown (it failed and the check of the blob failed too): %w", key, perr)
		case failed && attempt == 1:
			return blob.Info{}, preconditionErr(key, err) // a plain conflict
		case failed:
			return blob.Info{}, fmt.Errorf("azure: %q: the write's outcome is unknown (an attempt failed in transit, then its condition failed): %w", key, mapErr(key, err))
		}
		untouched := c.IfAbsent && missing || c.IfVersion != "" && perr == nil && info.Version == c.IfVersion
		if !untouched {
			return blob.Info{}, fmt.Errorf("azure: %q: the write's outcome is unknown (it failed in transit and the blob changed meanwhile): %w", key, mapErr(key, err))
		}
		if attempt == condAttempts {
			return blob.Info{}, mapErr(key, err) // the last read showed it not landed, but the attempt may still be in transit: a failure, never a conflict
		}
		select {
		case <-ctx.Done():
			return blob.Info{}, mapErr(key, err)
		case <-time.After(backoff):
		}
		backoff *= 2
	}
}

// Delete sends one conditional Delete Blob (IfAbsent, which can only fail,
// is refused by blob.CheckDelete before any request).
func (s *store) Delete(ctx context.Context, key string, c blob.Cond) error {
	if err := blob.CheckDelete(ctx, key, c); err != nil {
		return err
	}
	name, err := s.blobName(ctx, key)
	if err != nil {
		return err
	}
	switch {
	case c.IfVersion != "" && !validVersion(c.IfVersion):
		return fmt.Errorf("azure: %q: %w: %q is not a version of this store", key, blob.ErrPrecondition, c.IfVersion)
	}
	var opts *azblob.DeleteOptions
	if cond := accessConditions(c); cond != nil {
		opts = &azblob.DeleteOptions{AccessConditions: &azblob.AccessConditions{ModifiedAccessConditions: cond}}
	}
	if _, err := s.client.NewBlobClient(name).Delete(ctx, opts); err != nil {
		return mapErr(key, err)
	}
	return nil
}

func (s *store) List(ctx context.Context, prefix string) iter.Seq2[blob.Info, error] {
	return blob.CheckedList(ctx, prefix, func(yield func(blob.Info, error) bool) {
		var order byteOrder
		for info, err := range s.serverOrder(ctx, prefix) {
			if err != nil {
				yield(blob.Info{}, err)
				return
			}
			for _, ready := range order.push(info) {
				if !yield(ready, nil) {
					return
				}
			}
		}
		for _, ready := range order.flush() {
			if !yield(ready, nil) {
				return
			}
		}
	})
}

// serverOrder yields the Info of every valid key under prefix, in the
// order the service lists their blobs, a page at a time. It stops after
// yielding an error.
func (s *store) serverOrder(ctx context.Context, prefix string) iter.Seq2[blob.Info, error] {
	return func(yield func(blob.Info, error) bool) {
		opts := &container.ListBlobsFlatOptions{MaxResults: ptr(int32(pageSize))}
		if p := s.dir + escape(prefix); p != "" {
			opts.Prefix = &p
		}
		pager := s.client.NewListBlobsFlatPager(opts)
		for pager.More() {
			page, err := pager.NextPage(ctx)
			if err != nil {
				yield(blob.Info{}, mapErr(prefix, err))
				return
			}
			for _, item := range page.Segment.BlobItems {
				if item.Name == nil || item.Properties == nil {
					continue
				}
				rest, ok := strings.CutPrefix(*item.Name, s.dir)
				if !ok {
					continue
				}
				key, ok := unescape(rest)
				if !ok || blob.CheckKey(key) != nil {
					continue // not a name this store writes
				}
				var size int64
				if item.Properties.ContentLength != nil {
					size = *item.Properties.ContentLength
				}
				if !yield(newInfo(key, size, item.Properties.ETag, item.Properties.LastModified), nil) {
					return
				}
			}
		}
	}
}

// accessConditions returns the HTTP conditions that enforce c, or nil for
// the zero Cond.
func accessConditions(c blob.Cond) *azblob.ModifiedAccessConditions {
	switch {
	case c.IfAbsent:
		return &azblob.ModifiedAccessConditions{IfNoneMatch: ptr(azcore.ETagAny)}
	case c.IfVersion != "":
		return &azblob.ModifiedAccessConditions{IfMatch: ptr(azcore.ETag(`"` + c.IfVersion + `"`))}
	}
	return nil
}

// validVersion reports whether v can be a version of this store: an ETag
// without its quotes. Anything else (in particular "*", the wildcard) would
// change the meaning of If-Match or make a malformed header.
func validVersion(v string) bool {
	return v != "" && v != "*" && !strings.ContainsAny(v, "\"\r\n")
}

// newInfo builds an Info from a blob's attributes. The version is the ETag
// without the quotes that HTTP headers have and listings do not.
func newInfo(key string, size int64, etag *azcore.ETag, modified *time.Time) blob.Info {
	info := blob.Info{Key: key, Size: size}
	if etag != nil {
		info.Version = strings.Trim(string(*etag), `"`)
	}
	if modified != nil {
		info.Modified = *modified
	}
	return info
}

// metaValue looks name up in blob metadata, whose names the SDK returns in
// whatever case the HTTP headers had.
func metaValue(meta map[string]*string, name string) string {
	for k, v := range meta {
		if strings.EqualFold(k, name) && v != nil {
			return *v
		}
	}
	return ""
}

func ptr[T any](v T) *T { return &v }
