package s3

import (
	"net/http"
	"strings"
	"sync/atomic"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
)

// serverWatch learns from the server's answers whether it is MinIO, whose
// listings leave out keys under a key that exists as an object (see
// blob.Traits.HidesUnderObjects): MinIO keeps the object a/b as a directory a/b of its
// file system and does not descend into an object's directory when it
// lists, so while a/b exists a listing of "a/" or "a/b/" omits a/b/c, which
// HEAD and GET still find. AWS lists every key. The zero value knows
// nothing (false); it is safe for concurrent use.
type serverWatch struct{ minio atomic.Bool }

// isMinIO reports whether an answer of the server so far named MinIO in
// its Server header (as every MinIO answer does): the store's Traits then
// say that its listings hide keys under objects. It turns true with the
// first such answer and never back; it makes no request. The memory
// handler asks after a write, whose answer has told. A MinIO behind a proxy
// that rewrites the Server header is not recognised.
func (w *serverWatch) isMinIO() bool { return w.minio.Load() }

// watch returns a client like c whose every answer w looks at.
func (w *serverWatch) watch(c *awss3.Client) *awss3.Client {
	return awss3.New(c.Options(), func(o *awss3.Options) {
		inner := o.HTTPClient
		if inner == nil {
			inner = awshttp.NewBuildableClient()
		}
		o.HTTPClient = watchingClient{inner: inner, w: w}
	})
}

// watchingClient passes requests to inner and notes which server answered.
type watchingClient struct {
	inner awss3.HTTPClient
	w     *serverWatch
}

func (c watchingClient) Do(req *http.Request) (*http.Response, error) {
	resp, err := c.inner.Do(req)
	if resp != nil && strings.HasPrefix(resp.Header.Get("Server"), "MinIO") {
		c.w.minio.Store(true)
	}
	return resp, err
}
