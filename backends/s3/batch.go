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
)

var _ blob.BatchDeleter = (*store)(nil)

// DeleteBatch implements blob.BatchDeleter with DeleteObjects: a batch
// without versions with deleteKeys, one whose every element carries a
// version with deleteVersions. A batch that mixes the two gets
// errors.ErrUnsupported (blob.DeleteBatch then deletes its elements one by
// one); no caller makes one.
func (s *store) DeleteBatch(ctx context.Context, infos []blob.Info) ([]error, error) {
	versions := 0
	for _, info := range infos {
		if info.Version != "" {
			versions++
		}
	}
	switch versions {
	case 0:
		return s.deleteKeys(ctx, infos)
	case len(infos):
		return s.deleteVersions(ctx, infos)
	}
	return nil, errors.ErrUnsupported
}

// deleteKeys deletes elements without versions with DeleteObjects, up to
// 1,000 keys a request and up to blob.DeleteParallel requests at once. S3
// reports a missing key as deleted, so a missing key is no error. A key
// the server refuses gets its own error; the other keys of its request are
// deleted. A request that fails gives its error to each of its keys.
func (s *store) deleteKeys(ctx context.Context, infos []blob.Info) ([]error, error) {
	ids := make([]types.ObjectIdentifier, len(infos))
	at := make(map[string]int, len(infos)) // object key -> index in infos
	for i, info := range infos {
		k, err := s.objectKey(ctx, info.Key)
		if err != nil {
			return nil, err
		}
		ids[i] = types.ObjectIdentifier{Key: aws.String(k)}
		at[k] = i
	}
	errs := make([]error, len(infos))
	var (
		wg  sync.WaitGroup
		mu  sync.Mutex
		sem = make(chan struct{}, blob.DeleteParallel)
	)
	for first := 0; first < len(ids); first += pageSize {
		batch := ids[first:min(len(ids), first+pageSize)]
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			out, err := s.client.DeleteObjects(ctx, &awss3.DeleteObjectsInput{
				Bucket: &s.bucket,
				Delete: &types.Delete{Objects: batch, Quiet: aws.Bool(true)},
			})
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				err = fmt.Errorf("s3: deleting %d keys: %w", len(batch), hideAbsent(mapErr("", err)))
				for j := range batch {
					errs[first+j] = err
				}
				return
			}
			for _, e := range out.Errors {
				i, ok := at[aws.ToString(e.Key)]
				if !ok || aws.ToString(e.Code) == "NoSuchKey" {
					continue
				}
				errs[i] = fmt.Errorf("s3: %q: delete failed: %s: %s", infos[i].Key, aws.ToString(e.Code), aws.ToString(e.Message))
			}
		}()
	}
	wg.Wait()
	return errs, nil
}

// hideAbsent keeps the sentinels an unconditional delete must never wrap
// out of a request's error (a missing bucket maps to ErrNotExist).
func hideAbsent(err error) error {
	if errors.Is(err, blob.ErrNotExist) || errors.Is(err, blob.ErrPrecondition) {
		return errors.New(err.Error())
	}
	return err
}

// versionBatchMin is the fewest conditional keys DeleteBatch serves itself;
// fewer are cheaper as one HEAD and DELETE each (blob.DeleteBatch's
// fallback) than with a listing of their directory.
const versionBatchMin = 4

// deleteVersions serves a batch whose every element carries a version,
// for keys that share a directory: it lists that directory once and
// compares each key's listed ETag with the ETag of the version given (so, like Put(IfVersion), it
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
// errors.ErrUnsupported (blob.DeleteBatch then deletes them one by one).
func (s *store) deleteVersions(ctx context.Context, infos []blob.Info) ([]error, error) {
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
	listed := make(map[string]string, len(infos)) // key -> ETag, unquoted
	for obj, err := range s.objects(ctx, dir) {
		if err != nil {
			return nil, err
		}
		listed[strings.TrimPrefix(aws.ToString(obj.Key), s.dir)] = unquoteETag(aws.ToString(obj.ETag))
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
			ids = append(ids, types.ObjectIdentifier{Key: aws.String(k), ETag: aws.String(quoteETag(cur))})
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
