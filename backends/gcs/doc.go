// Package gcs is a blob.Store over a Google Cloud Storage bucket, built on
// cloud.google.com/go/storage (the JSON API over HTTP).
//
// # URL
//
//	gs://BUCKET/PREFIX?endpoint=URL
//
// BUCKET is required. PREFIX (optional, any number of segments) scopes the
// store to the objects under it: store key k is object name PREFIX/k. The
// shared prefix= parameter of package storeurl is applied the same way,
// after the path prefix. The one parameter of its own is:
//
//	endpoint=URL   the base URL of a server speaking the GCS JSON API: an emulator such as
//	               http://127.0.0.1:4443, or a private endpoint; /storage/v1/ is added when
//	               the URL has no path. Default: STORAGE_EMULATOR_HOST when set, else Google's.
//
// # Credentials
//
// The store has no credential handling of its own: the client library's
// Application Default Credentials find them (GOOGLE_APPLICATION_CREDENTIALS
// naming a service account or other credential file, the gcloud user
// credentials from "gcloud auth application-default login", or the
// metadata server on GCE, Cloud Run and GKE with Workload Identity). When
// STORAGE_EMULATOR_HOST is set (host:port, or a URL), the library sends
// every request there without credentials. An http:// endpoint is likewise
// sent no credentials, so that no token travels unencrypted; an https://
// endpoint gets the default credentials. A URL with a user name or password
// is refused.
//
// The store needs storage.objects.get, storage.objects.create,
// storage.objects.delete and storage.objects.list on the bucket: the
// predefined role roles/storage.objectUser grants them (with a few more),
// granted on the bucket alone.
//
// # Versions
//
// A version is the object's generation as a decimal string. GCS gives every
// write a new generation, even when the bytes are the same, and Get, Stat,
// Put and List all report it, so a List version equals the Stat version and
// works as Cond.IfVersion.
//
// # Guarantees
//
// Put(IfAbsent) sends ifGenerationMatch=0 and Put(IfVersion) sends
// ifGenerationMatch=GENERATION: the server enforces both, and of racing
// conditional writers exactly one wins; a 412 is blob.ErrPrecondition. The
// store sends a conditional write again itself, with the library's retries
// off for it: every Put stores a random 128-bit write id in the object's
// metadata (cloudmem-write), and after an attempt fails in transit the
// store reads the object. Its own id means the write landed; the object
// still absent, or still at the generation asked for, means it did not, and
// the write is sent again (at most 4 times); anything else is an unknown
// outcome (an error that is neither a success nor blob.ErrPrecondition),
// since the attempt may have landed under a rival's write. Unconditional
// writes and deletes are not retried by the library's default policy.
//
// Delete(IfVersion) deletes the pinned generation (generation=G) and sends
// ifGenerationMatch=G as well; when that generation is no longer the live
// one the server refuses, and the store reports blob.ErrPrecondition when
// the key exists with another generation and blob.ErrNotExist when it is
// gone. The bucket must not have Object Versioning enabled: there a
// delete pinned to an overwritten generation might remove that archived
// generation, not fail. Copy (blob.Copier) is one rewrite request with
// ifGenerationMatch=0 and ifSourceGenerationMatch, where the server
// enforces both (real GCS; the store probes once, four requests under
// .cloudmem); fake-gcs-server ignores them, so there blob.Copy reads and
// writes. Renames are not atomic: blob.Rename copies and
// deletes. blob.DeleteTree lists the directory and deletes its objects up
// to blob.DeleteParallel at once: one request each, since GCS has no batch
// delete, but overlapping, and each under the store's per-call deadline.
//
// List pages through the objects under the prefix, 1,000 a page, asking
// only for name, size, generation and update time. GCS lists names in byte
// order, which is blob's key order. Objects whose names are not valid blob
// keys (such as the "dir/" folder placeholders some consoles create) are
// invisible to List.
//
// A missing bucket makes Get, Stat and Delete report blob.ErrNotExist, as
// the JSON API answers 404 alike for a missing bucket and a missing object;
// Put and List fail with the server's error.
//
// Objects are stored with content type "text/plain; charset=utf-8" when the
// data is valid UTF-8 and "application/octet-stream" otherwise. The only
// custom metadata is the write id, which is random and carries nothing
// secret.
//
// # Emulator
//
// The integration tests run against fake-gcs-server v1.56.1, which enforces
// ifGenerationMatch on writes (create-only and compare-and-swap) and the
// pinned generation on delete, but ignores ifGenerationMatch on delete.
// Real GCS enforces both conditions on delete.
package gcs
