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

var (
	_ blob.Copier         = (*store)(nil)
	_ blob.VersionDeleter = (*store)(nil)
)

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
		CopySourceIfMatch: aws.String(etag),
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

// versionBatchMin is the fewest keys DeleteVersions serves itself; fewer
// are cheaper as one HEAD and DELETE each (blob.DeleteVersions's fallback)
// than with a listing of their directory.
const versionBatchMin = 4

// DeleteVersions implements blob.VersionDeleter for keys that share a
// directory: it lists that directory once and compares each key's listed
// ETag with the ETag of the version given (so, like Put(IfVersion), it
// compares content); the keys that match are deleted with DeleteObjects,
// each naming its ETag, up to blob.DeleteParallel requests at once. AWS
// enforces the ETag per key, so there a key rewritten after the listing
// is kept and reported as blob.ErrPrecondition. MinIO ignores it: there
// the check is the listing, and a write landing between the listing and
// the delete is deleted with the key (the same check-then-act as
// Delete(IfVersion) there, with a longer window). For n keys that is
// one listing request per 1,000 objects in the directory plus at most
// blob.DeleteParallel DeleteObjects, instead of 2n requests. Fewer than
// versionBatchMin keys, or keys with no common directory, get
// errors.ErrUnsupported (blob.DeleteVersions then deletes them one by one).
func (s *store) DeleteVersions(ctx context.Context, infos []blob.Info) ([]error, error) {
	if len(infos) < versionBatchMin {
		return nil, errors.ErrUnsupported
	}
	dir := commonDir(infos)
	if dir == "" {
		return nil, errors.ErrUnsupported
	}
	for _, info := range infos {
		if _, err := s.objectKey(ctx, info.Key); err != nil {
			return nil, err
		}
	}
	listed := make(map[string]string, len(infos)) // key -> ETag
	for obj, err := range s.objects(ctx, dir) {
		if err != nil {
			return nil, err
		}
		listed[strings.TrimPrefix(aws.ToString(obj.Key), s.dir)] = aws.ToString(obj.ETag)
	}
	errs := make([]error, len(infos))
	var ids []types.ObjectIdentifier
	at := make(map[string]int, len(infos)) // object key -> index in infos
	for i, info := range infos {
		want, _ := splitVersion(info.Version)
		cur, ok := listed[info.Key]
		switch {
		case !ok:
			errs[i] = fmt.Errorf("s3: %q: %w", info.Key, blob.ErrNotExist)
		case cur != want:
			errs[i] = fmt.Errorf("s3: %q: %w: version %q is not the current one", info.Key, blob.ErrPrecondition, info.Version)
		default:
			k := s.dir + info.Key
			at[k] = i
			ids = append(ids, types.ObjectIdentifier{Key: aws.String(k), ETag: aws.String(cur)})
		}
	}
	// Split the keys over parallel requests: a server deletes the keys of
	// one request one after another.
	per := min(pageSize, max(1, (len(ids)+blob.DeleteParallel-1)/blob.DeleteParallel))
	var (
		wg sync.WaitGroup
		mu sync.Mutex
	)
	for len(ids) > 0 {
		batch := ids[:min(len(ids), per)]
		ids = ids[len(batch):]
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := s.client.DeleteObjects(ctx, &awss3.DeleteObjectsInput{
				Bucket: &s.bucket,
				Delete: &types.Delete{Objects: batch, Quiet: aws.Bool(true)},
			})
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				err = fmt.Errorf("s3: deleting %d keys: %w", len(batch), hideAbsent(mapErr("", err)))
				for _, id := range batch {
					errs[at[aws.ToString(id.Key)]] = err
				}
				return
			}
			for _, e := range out.Errors {
				i, ok := at[aws.ToString(e.Key)]
				if !ok {
					continue
				}
				key := infos[i].Key
				switch aws.ToString(e.Code) {
				case "PreconditionFailed":
					errs[i] = fmt.Errorf("s3: %q: %w: %s", key, blob.ErrPrecondition, aws.ToString(e.Message))
				case "NoSuchKey":
					errs[i] = fmt.Errorf("s3: %q: %w", key, blob.ErrNotExist)
				default:
					errs[i] = fmt.Errorf("s3: %q: delete failed: %s: %s", key, aws.ToString(e.Code), aws.ToString(e.Message))
				}
			}
		}()
	}
	wg.Wait()
	return errs, nil
}

// commonDir returns the longest directory ("a/b/") holding every key of
// infos, or "" when they share none.
func commonDir(infos []blob.Info) string {
	p := infos[0].Key
	for _, info := range infos[1:] {
		n := 0
		for n < len(p) && n < len(info.Key) && p[n] == info.Key[n] {
			n++
		}
		p = p[:n]
	}
	return p[:strings.LastIndexByte(p, '/')+1]
}
