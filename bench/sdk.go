package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"cloud.google.com/go/storage"
	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	goredis "github.com/redis/go-redis/v9"
)

// sdkFloor issues the requests of a file view, a str_replace, a create and
// a delete with the backend's own client, on an object of its own (outside
// the store), with none of the Store's work: no key checks, no write ids,
// no error mapping, no memory tree. It is the cheapest way to do the same
// thing with the same guarantees of the server (a conditional write),
// except where a type's comment says otherwise.
type sdkFloor interface {
	// setup writes data as the object.
	setup(ctx context.Context, data []byte) error
	// view reads the object.
	view(ctx context.Context) error
	// replace reads the object and writes the bytes read back, on the
	// condition that it still has the version read.
	replace(ctx context.Context) error
	// create writes data as the object on the condition that it does not
	// exist.
	create(ctx context.Context, data []byte) error
	// cleanup deletes the object.
	cleanup(ctx context.Context) error
}

// s3Floor: one GetObject; GetObject + PutObject with If-Match.
type s3Floor struct {
	client      *awss3.Client
	bucket, key string
}

func (f *s3Floor) setup(ctx context.Context, data []byte) error {
	_, err := f.client.PutObject(ctx, &awss3.PutObjectInput{
		Bucket: &f.bucket, Key: &f.key, Body: bytes.NewReader(data), ContentLength: aws.Int64(int64(len(data))),
	})
	return err
}

func (f *s3Floor) get(ctx context.Context) ([]byte, *string, error) {
	out, err := f.client.GetObject(ctx, &awss3.GetObjectInput{Bucket: &f.bucket, Key: &f.key})
	if err != nil {
		return nil, nil, err
	}
	defer out.Body.Close()
	data, err := io.ReadAll(out.Body)
	return data, out.ETag, err
}

func (f *s3Floor) view(ctx context.Context) error {
	_, _, err := f.get(ctx)
	return err
}

func (f *s3Floor) replace(ctx context.Context) error {
	data, etag, err := f.get(ctx)
	if err != nil {
		return err
	}
	_, err = f.client.PutObject(ctx, &awss3.PutObjectInput{
		Bucket: &f.bucket, Key: &f.key, Body: bytes.NewReader(data),
		ContentLength: aws.Int64(int64(len(data))), IfMatch: etag,
	})
	return err
}

func (f *s3Floor) create(ctx context.Context, data []byte) error {
	_, err := f.client.PutObject(ctx, &awss3.PutObjectInput{
		Bucket: &f.bucket, Key: &f.key, Body: bytes.NewReader(data),
		ContentLength: aws.Int64(int64(len(data))), IfNoneMatch: aws.String("*"),
	})
	return err
}

func (f *s3Floor) cleanup(ctx context.Context) error {
	_, err := f.client.DeleteObject(ctx, &awss3.DeleteObjectInput{Bucket: &f.bucket, Key: &f.key})
	return err
}

// gcsFloor: one object read; a read + an upload with ifGenerationMatch. The
// upload is a single request with no retry buffer (ChunkSize 0).
type gcsFloor struct {
	obj *storage.ObjectHandle
}

func (f *gcsFloor) write(ctx context.Context, obj *storage.ObjectHandle, data []byte) error {
	w := obj.NewWriter(ctx)
	w.ChunkSize = 0
	if _, err := w.Write(data); err != nil {
		_ = w.Close() // reports the same failure
		return err
	}
	return w.Close()
}

func (f *gcsFloor) setup(ctx context.Context, data []byte) error { return f.write(ctx, f.obj, data) }

func (f *gcsFloor) get(ctx context.Context) ([]byte, int64, error) {
	r, err := f.obj.NewReader(ctx)
	if err != nil {
		return nil, 0, err
	}
	defer r.Close()
	data, err := io.ReadAll(r)
	return data, r.Attrs.Generation, err
}

func (f *gcsFloor) view(ctx context.Context) error {
	_, _, err := f.get(ctx)
	return err
}

func (f *gcsFloor) replace(ctx context.Context) error {
	data, gen, err := f.get(ctx)
	if err != nil {
		return err
	}
	return f.write(ctx, f.obj.If(storage.Conditions{GenerationMatch: gen}), data)
}

func (f *gcsFloor) create(ctx context.Context, data []byte) error {
	return f.write(ctx, f.obj.If(storage.Conditions{DoesNotExist: true}), data)
}

func (f *gcsFloor) cleanup(ctx context.Context) error { return f.obj.Delete(ctx) }

// redisFloor keeps the object in a hash (fields d: data, v: version): one
// HMGET; an HMGET + one script that writes only if the version is
// unchanged (the least a compare-and-swap needs in Redis); one HSETNX of
// the version and, when it set it, one HSET of the data, in one script;
// one DEL.
type redisFloor struct {
	client      goredis.UniversalClient
	key         string
	cas, absent *goredis.Script
}

func newRedisFloor(client goredis.UniversalClient, key string) *redisFloor {
	return &redisFloor{client: client, key: key, cas: goredis.NewScript(`
if redis.call('HGET', KEYS[1], 'v') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'd', ARGV[2], 'v', tostring(tonumber(ARGV[1]) + 1))
return 1`), absent: goredis.NewScript(`
if redis.call('HSETNX', KEYS[1], 'v', '1') == 0 then return 0 end
redis.call('HSET', KEYS[1], 'd', ARGV[1])
return 1`)}
}

func (f *redisFloor) create(ctx context.Context, data []byte) error {
	n, err := f.absent.Run(ctx, f.client, []string{f.key}, data).Int()
	if err == nil && n != 1 {
		err = errors.New("redis floor: the object exists")
	}
	return err
}

func (f *redisFloor) setup(ctx context.Context, data []byte) error {
	return f.client.HSet(ctx, f.key, "d", data, "v", "1").Err()
}

func (f *redisFloor) get(ctx context.Context) (data, version string, err error) {
	vals, err := f.client.HMGet(ctx, f.key, "d", "v").Result()
	if err != nil {
		return "", "", err
	}
	data, ok1 := vals[0].(string)
	version, ok2 := vals[1].(string)
	if !ok1 || !ok2 {
		return "", "", fmt.Errorf("redis floor: %s is missing", f.key)
	}
	return data, version, nil
}

func (f *redisFloor) view(ctx context.Context) error {
	_, _, err := f.get(ctx)
	return err
}

func (f *redisFloor) replace(ctx context.Context) error {
	data, version, err := f.get(ctx)
	if err != nil {
		return err
	}
	n, err := f.cas.Run(ctx, f.client, []string{f.key}, version, data).Int()
	if err == nil && n != 1 {
		err = errors.New("redis floor: the version changed")
	}
	return err
}

func (f *redisFloor) cleanup(ctx context.Context) error { return f.client.Del(ctx, f.key).Err() }

// fileFloor: one os.ReadFile; a read + a durable atomic replace (temporary
// file, fsync, rename, fsync of the directory), as the file store writes.
// Unlike the store it takes no lock and checks no version: no file system
// call can make the write conditional, so this floor is cheaper than any
// store that keeps the guarantee.
type fileFloor struct {
	dir string
}

func (f *fileFloor) path() string { return filepath.Join(f.dir, "notes.md") }

func (f *fileFloor) setup(_ context.Context, data []byte) error { return f.write(data) }

// write is a durable atomic replace: a temporary file, fsync, rename,
// fsync of the directory.
func (f *fileFloor) write(data []byte) error { return f.place(data, os.Rename) }

// place writes data to a temporary file, fsyncs it, puts it at the path
// with put (os.Rename replaces, os.Link fails if the path exists), removes
// the temporary name if it is left, and fsyncs the directory.
func (f *fileFloor) place(data []byte, put func(oldpath, newpath string) error) error {
	tmp, err := os.CreateTemp(f.dir, ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // gone after a rename: no error to report
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = put(tmp.Name(), f.path())
	}
	if err != nil {
		return err
	}
	return f.syncDir()
}

func (f *fileFloor) view(context.Context) error {
	_, err := os.ReadFile(f.path())
	return err
}

func (f *fileFloor) replace(context.Context) error {
	data, err := os.ReadFile(f.path())
	if err != nil {
		return err
	}
	return f.write(data)
}

// create is a durable create-only write: as write, with a link (which
// fails if the path exists) in place of the rename.
func (f *fileFloor) create(_ context.Context, data []byte) error { return f.place(data, os.Link) }

func (f *fileFloor) syncDir() error {
	d, err := os.Open(f.dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// cleanup removes the file and fsyncs the directory: a durable delete.
func (f *fileFloor) cleanup(context.Context) error {
	if err := os.Remove(f.path()); err != nil {
		return err
	}
	return f.syncDir()
}
