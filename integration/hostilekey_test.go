package integration

import (
	"bytes"
	"context"
	"slices"
	"testing"

	"cloud.google.com/go/storage"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	goredis "github.com/redis/go-redis/v9"

	"github.com/cloudmem/cloudmem/backends/azure"
	"github.com/cloudmem/cloudmem/backends/gcs"
	"github.com/cloudmem/cloudmem/backends/redis"
	"github.com/cloudmem/cloudmem/backends/s3"
	"github.com/cloudmem/cloudmem/blob"
)

// hostileKeys are object names another program may leave under a store's
// prefix that are not valid memory names (see blob.CheckKey): a listing
// must skip them, not fail on them (issue 26, item 3). S3 sends keys in
// XML 1.0, which cannot carry U+0002 unless the listing asks for URL
// encoding.
var hostileKeys = []string{"sub/bad\x02", "sub/del\x7f.md", "sub/tab\tname.md", "sub/nl\nname.md"}

// azuriteHostileKeys are the hostileKeys Azurite 3.37 can list: it answers
// 500 to a listing that holds U+0001 or U+0002 (Azure itself sends such a
// name URL-encoded, with Encoded="true", which the SDK decodes).
var azuriteHostileKeys = []string{"sub/del\x7f.md", "sub/tab\tname.md", "sub/nl\nname.md"}

// goodKeys are valid names that a decoding listing could get wrong ('+'
// and ' ' are both spaces in form encoding; '%' starts an escape).
var goodKeys = []string{"sub/a+b c%41.md", "sub/good.md"}

// checkHostileKeys writes goodKeys through s, whose prefix also holds
// hostileKeys (planted directly through the SDK), and checks that every
// listing shows the good keys alone, by their names, and that reading and
// deleting them works.
func checkHostileKeys(t *testing.T, s blob.Store) {
	t.Helper()
	ctx := t.Context()
	for _, k := range goodKeys {
		if _, err := s.Put(ctx, k, []byte("good\n"), blob.Cond{}); err != nil {
			t.Fatalf("Put: %v", err)
		}
	}
	for _, prefix := range []string{"", "sub/"} {
		var got []string
		for info, err := range s.List(ctx, prefix) {
			if err != nil {
				t.Fatalf("List(%q): %v", prefix, err)
			}
			got = append(got, info.Key)
		}
		if !slices.Equal(got, goodKeys) {
			t.Errorf("List(%q) = %q, want %q", prefix, got, goodKeys)
		}
	}
	for _, k := range goodKeys {
		data, _, err := s.Get(ctx, k, 1<<20)
		if err != nil || string(data) != "good\n" {
			t.Errorf("Get(%q) = %q, %v; want \"good\\n\", nil", k, data, err)
		}
		if err := s.Delete(ctx, k, blob.Cond{}); err != nil {
			t.Errorf("Delete(%q): %v", k, err)
		}
	}
	for info, err := range s.List(ctx, "") {
		if err != nil {
			t.Fatalf("List after Delete: %v", err)
		}
		t.Errorf("List after Delete: %q is left", info.Key)
	}
}

func TestS3HostileKey(t *testing.T) {
	endpoint, bucket := s3Server(t)
	client := s3Client(t, endpoint, nil)
	dir := "agent/" + uniquePrefix()
	for _, k := range hostileKeys {
		key := dir + "/" + k
		if _, err := client.PutObject(t.Context(), &awss3.PutObjectInput{Bucket: &bucket, Key: &key, Body: bytes.NewReader([]byte("x"))}); err != nil {
			t.Fatalf("planting %q: %v", key, err)
		}
		t.Cleanup(func() {
			if _, err := client.DeleteObject(context.Background(), &awss3.DeleteObjectInput{Bucket: &bucket, Key: aws.String(key)}); err != nil {
				t.Errorf("cleanup %q: %v", key, err)
			}
		})
	}
	s, err := s3.Open(t.Context(), bucket, dir, &s3.Options{Endpoint: endpoint, PathStyle: true})
	if err != nil {
		t.Fatal(err)
	}
	checkHostileKeys(t, s)
}

func TestGCSHostileKey(t *testing.T) {
	bucket := gcsServer(t)
	client := gcsClient(t, nil)
	dir := "agent/" + uniquePrefix()
	for _, k := range hostileKeys {
		obj := client.Bucket(bucket).Object(dir + "/" + k)
		w := obj.NewWriter(t.Context())
		if _, err := w.Write([]byte("x")); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatalf("planting %q: %v", k, err)
		}
		t.Cleanup(func() {
			if err := obj.Delete(context.Background()); err != nil && err != storage.ErrObjectNotExist {
				t.Errorf("cleanup %q: %v", k, err)
			}
		})
	}
	checkHostileKeys(t, openGCS(t, bucket, dir, &gcs.Options{Client: client}))
}

func TestAzureHostileKey(t *testing.T) {
	conn, containerName := azureServer(t)
	client, err := container.NewClientFromConnectionString(conn, containerName, nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := "agent/" + uniquePrefix()
	for _, k := range azuriteHostileKeys {
		name := dir + "/" + k
		if _, err := client.NewBlockBlobClient(name).UploadBuffer(t.Context(), []byte("x"), nil); err != nil {
			t.Fatalf("planting %q: %v", name, err)
		}
		t.Cleanup(func() {
			if _, err := client.NewBlobClient(name).Delete(context.Background(), nil); err != nil {
				t.Errorf("cleanup %q: %v", name, err)
			}
		})
	}
	checkHostileKeys(t, openAzure(t, "", dir, &azure.Options{Client: client}))
}

func TestRedisHostileKey(t *testing.T) {
	client := redisClient(t)
	prefix := uniquePrefix()
	s, err := redis.Open(t.Context(), client, &redis.Options{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dropRedisPrefix(t, client, prefix) })
	// Plant what the put script would have written for each key (see
	// backends/redis/keys.go): the object hash and its index member.
	base := "cm:{" + prefix + "}:"
	for _, k := range hostileKeys {
		if err := client.HSet(t.Context(), base+"o:"+k, "d", "x", "v", "1", "s", "1", "m", "1700000000000000").Err(); err != nil {
			t.Fatal(err)
		}
		if err := client.ZAdd(t.Context(), base+"idx", goredis.Z{Member: k}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	checkHostileKeys(t, s)
}
