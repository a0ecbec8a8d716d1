package s3

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/internal/objmeta"
)

var _ blob.Copier = (*store)(nil)

// copyProbe remembers whether the server refuses a CopyObject with
// If-None-Match: * onto an existing key. AWS documents that it does; MinIO
// copies over the key regardless, so there a create-only copy cannot be
// made on the server. The zero value has not looked yet; it is safe for
// concurrent use.
type copyProbe struct {
	mu       sync.Mutex
	known    bool
	honoured bool
}

// probeKey is the name, under the reserved directory, of the object the
// probe writes, copies onto itself and deletes; a random suffix keeps
// concurrent probes apart.
const probeKey = blob.ReservedName + "/probe-copy-"

// createOnlyCopy reports whether the server enforces If-None-Match on
// CopyObject, finding out once per store: it writes a small object under
// the reserved directory, copies it onto itself with If-None-Match: *
// (a server that honours the condition answers 412) and deletes it, three
// requests. A failed probe is not remembered, so the next Copy tries again.
func (s *store) createOnlyCopy(ctx context.Context) (bool, error) {
	p := &s.copyMode
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.known {
		return p.honoured, nil
	}
	k := s.dir + probeKey + objmeta.NewWriteID()
	body := []byte("cloudmem probe: safe to delete\n")
	if _, err := s.put(ctx, &awss3.PutObjectInput{
		Bucket: &s.bucket, Key: &k, ContentLength: aws.Int64(int64(len(body))),
		ContentType: aws.String(objmeta.ContentType(body)),
	}, body); err != nil {
		return false, fmt.Errorf("s3: probing CopyObject: %w", mapErr(probeKey, err))
	}
	_, err := s.client.CopyObject(ctx, &awss3.CopyObjectInput{
		Bucket: &s.bucket, Key: &k, CopySource: aws.String(copySource(s.bucket, k)),
		IfNoneMatch:       aws.String("*"),
		MetadataDirective: types.MetadataDirectiveReplace,
		Metadata:          map[string]string{metaWriteID: objmeta.NewWriteID()},
		ContentType:       aws.String(objmeta.ContentType(body)),
	})
	_, derr := s.client.DeleteObject(context.WithoutCancel(ctx), &awss3.DeleteObjectInput{Bucket: &s.bucket, Key: &k})
	switch {
	case classify(err) == blob.ErrPrecondition:
		p.known, p.honoured = true, true
	case err == nil:
		p.known = true
	default:
		return false, fmt.Errorf("s3: probing CopyObject: %w", mapErr(probeKey, err))
	}
	if derr != nil {
		return p.honoured, fmt.Errorf("s3: removing the CopyObject probe: %w", mapErr(probeKey, derr))
	}
	return p.honoured, nil
}

// copySource is CopyObject's x-amz-copy-source: bucket/key, URL-escaped.
func copySource(bucket, k string) string {
	var b strings.Builder
	b.WriteString(bucket)
	b.WriteByte('/')
	for i := range len(k) {
		c := k[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-_.~/", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}

// Copy implements blob.Copier on a server that enforces If-None-Match on
// CopyObject (AWS); on one that does not (MinIO), it returns
// errors.ErrUnsupported and blob.Copy reads and writes instead. It costs
// two requests: a HEAD of the source, for its version and content type,
// then CopyObject with x-amz-copy-source-if-match (the source's ETag) and
// If-None-Match: *, which replaces the metadata with a fresh write id so
// that the copy's version is its own. Like Put(IfVersion), the source
// condition compares ETags, so content.
func (s *store) Copy(ctx context.Context, src, dst, srcVersion string) (blob.Info, error) {
	ks, err := s.objectKey(ctx, src)
	if err != nil {
		return blob.Info{}, err
	}
	kd, err := s.objectKey(ctx, dst)
	if err != nil {
		return blob.Info{}, err
	}
	if ok, err := s.createOnlyCopy(ctx); err != nil || !ok {
		return blob.Info{}, errors.Join(errors.ErrUnsupported, err)
	}
	out, err := s.client.HeadObject(ctx, &awss3.HeadObjectInput{Bucket: &s.bucket, Key: &ks})
	if err != nil {
		return blob.Info{}, mapErr(src, err)
	}
	cur := newInfo(src, aws.ToInt64(out.ContentLength), out.ETag, out.Metadata, out.LastModified)
	if !versionMatches(srcVersion, cur.Version) {
		return blob.Info{}, fmt.Errorf("s3: %q: %w: version %q is not the current one", src, blob.ErrPrecondition, srcVersion)
	}
	etag, _ := splitVersion(cur.Version)
	id := objmeta.NewWriteID()
	in := &awss3.CopyObjectInput{
		Bucket:            &s.bucket,
		Key:               &kd,
		CopySource:        aws.String(copySource(s.bucket, ks)),
		CopySourceIfMatch: aws.String(quoteETag(etag)),
		IfNoneMatch:       aws.String("*"),
		MetadataDirective: types.MetadataDirectiveReplace,
		Metadata:          map[string]string{metaWriteID: id},
		ContentType:       out.ContentType,
	}
	res, err := s.client.CopyObject(ctx, in)
	if isConflict(err) {
		res, err = s.client.CopyObject(ctx, in)
	}
	if err != nil {
		if classify(err) == blob.ErrPrecondition || isConflict(err) {
			// A retried copy whose first attempt landed fails against our
			// own write: the write id tells ours from a rival's.
			if info, herr := s.head(ctx, dst, kd); herr == nil && writeIDOf(info.Version) == id {
				return info, nil
			}
			return blob.Info{}, fmt.Errorf("s3: copying %q to %q: %w: %w", src, dst, blob.ErrPrecondition, err)
		}
		return blob.Info{}, fmt.Errorf("s3: copying to %q: %w", dst, mapErr(src, err))
	}
	var tag *string
	if res.CopyObjectResult != nil {
		tag = res.CopyObjectResult.ETag
	}
	return blob.Info{Key: dst, Size: cur.Size, Version: joinVersion(aws.ToString(tag), id)}, nil
}
