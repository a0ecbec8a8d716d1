package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"sync/atomic"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	azblob "github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/cloudmem/cloudmem/backends/azure"
)

func (e *env) openAzure(ctx context.Context, name string) (*target, error) {
	conn, err := getenv("CLOUDMEM_TEST_AZURE_CONNECTION_STRING")
	if err != nil {
		return nil, err
	}
	containerName, err := getenv("CLOUDMEM_TEST_BUCKET")
	if err != nil {
		return nil, err
	}
	n := new(atomic.Int64)
	opts := &container.ClientOptions{}
	opts.Transport = countedDoer{next: &http.Client{Transport: newTransport()}, n: n}
	client, err := container.NewClientFromConnectionString(conn, containerName, opts)
	if err != nil {
		return nil, err
	}
	prefix := e.prefix(name)
	s, err := azure.Open(ctx, "", prefix, &azure.Options{Client: client})
	if err != nil {
		return nil, err
	}
	floor := &azureFloor{blob: client.NewBlockBlobClient(prefix + "-raw/notes.md")}
	t := remoteTarget(name, s, floor, n.Load, func() error { return nil })
	t.url = "azblob://" + containerName + "/" + prefix
	t.urlEnv = []string{"AZURE_STORAGE_CONNECTION_STRING=" + conn}
	return t, nil
}

// azureFloor: one DownloadStream; a DownloadStream + an Upload with
// If-Match.
type azureFloor struct {
	blob *blockblob.Client
}

func (f *azureFloor) upload(ctx context.Context, data []byte, ifMatch *azcore.ETag) error {
	var opts *blockblob.UploadOptions
	if ifMatch != nil {
		opts = &blockblob.UploadOptions{AccessConditions: &azblob.AccessConditions{
			ModifiedAccessConditions: &azblob.ModifiedAccessConditions{IfMatch: ifMatch},
		}}
	}
	_, err := f.blob.Upload(ctx, streaming.NopCloser(bytes.NewReader(data)), opts)
	return err
}

func (f *azureFloor) setup(ctx context.Context, data []byte) error { return f.upload(ctx, data, nil) }

func (f *azureFloor) get(ctx context.Context) ([]byte, *azcore.ETag, error) {
	resp, err := f.blob.DownloadStream(ctx, nil)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return data, resp.ETag, err
}

func (f *azureFloor) view(ctx context.Context) error {
	_, _, err := f.get(ctx)
	return err
}

func (f *azureFloor) replace(ctx context.Context) error {
	data, etag, err := f.get(ctx)
	if err != nil {
		return err
	}
	return f.upload(ctx, data, etag)
}

func (f *azureFloor) create(ctx context.Context, data []byte) error {
	star := azcore.ETagAny
	_, err := f.blob.Upload(ctx, streaming.NopCloser(bytes.NewReader(data)), &blockblob.UploadOptions{
		AccessConditions: &azblob.AccessConditions{
			ModifiedAccessConditions: &azblob.ModifiedAccessConditions{IfNoneMatch: &star},
		}})
	return err
}

func (f *azureFloor) cleanup(ctx context.Context) error {
	_, err := f.blob.Delete(ctx, nil)
	return err
}
