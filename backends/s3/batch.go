package s3

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/cloudmem/cloudmem/blob"
)

var _ blob.BatchDeleter = (*store)(nil)

// DeleteKeys implements blob.BatchDeleter with DeleteObjects, up to 1,000
// keys a request, one request after another. S3 reports a missing key as
// deleted, so a missing key is no error. A key the server refuses is
// named in the joined errors; the other keys of its request are deleted.
func (s *store) DeleteKeys(ctx context.Context, keys []string) error {
	ids := make([]types.ObjectIdentifier, len(keys))
	for i, key := range keys {
		k, err := s.objectKey(ctx, key)
		if err != nil {
			return err
		}
		ids[i] = types.ObjectIdentifier{Key: aws.String(k)}
	}
	var errs []error
	for len(ids) > 0 {
		batch := ids[:min(len(ids), pageSize)]
		ids = ids[len(batch):]
		out, err := s.client.DeleteObjects(ctx, &awss3.DeleteObjectsInput{
			Bucket: &s.bucket,
			Delete: &types.Delete{Objects: batch, Quiet: aws.Bool(true)},
		})
		if err != nil {
			return errors.Join(append(errs, fmt.Errorf("s3: deleting %d keys: %w", len(batch), hideAbsent(mapErr("", err))))...)
		}
		for _, e := range out.Errors {
			if aws.ToString(e.Code) == "NoSuchKey" {
				continue
			}
			key := strings.TrimPrefix(aws.ToString(e.Key), s.dir)
			errs = append(errs, fmt.Errorf("s3: %q: delete failed: %s: %s", key, aws.ToString(e.Code), aws.ToString(e.Message)))
		}
	}
	return errors.Join(errs...)
}

// hideAbsent keeps the sentinels BatchDeleter promises never to wrap out of
// a request's error (a missing bucket maps to ErrNotExist).
func hideAbsent(err error) error {
	if errors.Is(err, blob.ErrNotExist) || errors.Is(err, blob.ErrPrecondition) {
		return errors.New(err.Error())
	}
	return err
}
