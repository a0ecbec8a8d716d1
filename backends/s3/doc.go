// Package s3 is a blob.Store over an Amazon S3 bucket or an S3-compatible
// server (MinIO, Cloudflare R2, Ceph, Wasabi), built on aws-sdk-go-v2.
//
// # URL
//
//	s3://BUCKET/PREFIX?region=R&endpoint=URL&path_style=true
//
// BUCKET is required. PREFIX (optional, any number of segments) scopes the
// store to the objects under it: store key k is object key PREFIX/k. The
// shared prefix= parameter of package storeurl is applied the same way,
// after the path prefix. The parameters are:
//
//	region=R          the bucket's region; default: the SDK's chain (AWS_REGION, shared config),
//	                  then us-east-1 when endpoint is set
//	endpoint=URL      the base URL of an S3-compatible server, e.g. http://127.0.0.1:9000
//	path_style=true   address the bucket in the path (http://host/BUCKET/key), as MinIO needs;
//	                  true, false, 1 or 0; default false (virtual-hosted style)
//
// S3 keys are at most 1,024 bytes, prefix included, so under a prefix of n
// bytes the longest store key is 1,023-n bytes; longer keys fail with
// blob.ErrInvalidKey before any request.
//
// # Credentials
//
// The store has no credential handling of its own: the SDK's default chain
// finds them (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_PROFILE with
// the shared config and credentials files, SSO, web identity and IRSA, ECS
// and EC2 instance roles). A URL with a user name or password is refused.
// The store needs s3:ListBucket on the bucket and s3:GetObject,
// s3:PutObject and s3:DeleteObject on the objects under the prefix. Without
// s3:ListBucket, AWS answers a request for a missing object with 403 Access
// Denied instead of 404, which the store cannot tell from a real denial.
//
// # Versions
//
// A version is the object's ETag joined with a write id: a random 128-bit
// number that every Put stores in the object's user metadata
// (x-amz-meta-cloudmem-write). S3's ETag is a hash of the content, so the
// write id is what makes versions differ when the same bytes are written
// twice. Get, Stat and Put return such versions. List returns the ETag
// alone, because S3 listings carry no user metadata: a List version is not
// equal to the Stat version of the same object, but works as Cond.IfVersion.
// The ETag is spelled without the quotes of its HTTP form
// (0b2d...#9f3a..., not "0b2d..."#9f3a...), and the quotes are put back
// on the requests that name it; a version in the quoted form that earlier
// releases returned is still accepted.
//
// Put(IfVersion) sends If-Match with the version's ETag, so S3 compares
// content, not writes: if another writer stored identical bytes since the
// version was read, the conditional Put still succeeds. No update is lost by
// that: the new bytes were computed from content identical to what is
// stored, so the result is what it would have been had the caller read the
// newer version.
//
// # Guarantees
//
// The MinIO column is what this repository's tests prove (integration,
// against MinIO). The AWS column is what AWS documents for these requests;
// no test here runs against AWS, so treat it as the documented behaviour,
// not a tested one.
//
//	operation            how                                        AWS          MinIO
//	Put(IfAbsent)        If-None-Match: *                           atomic       atomic
//	Put(IfVersion)       If-Match: ETag                             atomic       atomic
//	Delete(IfVersion)    HEAD, compare version, If-Match: ETag      atomic       check-then-act
//	Delete, Get, Stat    one request each (Delete: HEAD first)      atomic       atomic
//	List                 ListObjectsV2, 1,000 keys a page           byte order   byte order
//	DeleteTree           List + DeleteObjects, 1,000 keys a call    not atomic   not atomic
//	                     (blob.DeleteTree through blob.BatchDeleter)
//	Rename (blob.Rename) copy with Put(IfAbsent), then delete       not atomic   not atomic
//	Copy (blob.Copier)   HEAD, CopyObject If-None-Match: *          atomic       unsupported
//	DeleteBatch          DeleteObjects; with versions: List +       per key      check-then-act
//	                     DeleteObjects naming each ETag
//
// Of racing conditional Puts exactly one wins: tested on MinIO, documented
// by AWS. A 409
// ConditionalRequestConflict is retried once, then reported as
// blob.ErrPrecondition. The store sends a conditional Put again itself,
// with the SDK's retries off for it: after an attempt fails in transit it
// reads the object. Its own write id means the Put landed (success); the
// object still absent, or still at the version asked for, means it did not,
// and the Put is sent again (at most 4 times); anything else is an unknown
// outcome (an error that is neither a success nor blob.ErrPrecondition),
// since the attempt may have landed under a rival's write. A failed
// condition is a conflict only on the first attempt.
//
// Delete reads the object first: S3 deletes a missing key without complaint,
// and the blob contract wants blob.ErrNotExist. Delete(IfVersion) compares
// the whole version (write id included) with what it read, then sends
// DeleteObject with If-Match, which AWS documents that it enforces (untested
// here), so there a write racing the delete would never be lost. MinIO ignores If-Match on DeleteObject: there a
// write landing between the read and the delete is deleted with it. The
// memory handler's correctness rests on conditional Put only. Two
// Deletes of one key that both read it before either deletes it both
// succeed, so the store reports blob.Traits.DeletesMayRepeat and the
// memory handler takes no deleted file off its file count. If the SDK
// retries a conditional delete whose first attempt landed, the retry
// reports blob.ErrNotExist.
//
// Copy is a copy on the server where the server refuses a CopyObject with
// If-None-Match: * onto an existing key, which the store finds out once
// (a probe object under .cloudmem, three requests). MinIO copies over the
// key regardless, so there Copy reports errors.ErrUnsupported and blob.Copy
// reads and writes (Get, Put(IfAbsent)). DeleteBatch (blob.BatchDeleter)
// sends DeleteObjects, 1,000 keys a request; with versions (for four keys
// or more under one directory) it first lists that directory once and
// sends DeleteObjects for the keys whose listed ETag is the one given, up
// to blob.DeleteParallel requests at once: a moved directory's n sources
// cost one listing and at most 16 requests instead of 2n. See batch.go.
//
// A missing bucket is an error of its own for every call but Stat and
// Delete, whose HEAD request gets a bare 404 and reports blob.ErrNotExist.
// MinIO (a file-system-backed server) holds the objects a/b and a/b/c at
// once (it refuses neither Put) but leaves a/b/c out of listings while a/b
// exists, though HEAD and GET find it; AWS lists both. The store reports
// a Traits.HidesUnderObjects of true once an answer names MinIO in its Server header,
// and the memory handler then runs the create protocol that needs no such
// listing, so it never creates such pairs. Objects whose keys are not valid blob keys, such as the "dir/"
// folder markers some consoles create or names with control characters,
// are invisible to List and blob.DeleteTree, which reports every key S3
// failed to delete. Listings ask for URL-encoded keys (EncodingType=url)
// and decode them, because S3's XML cannot carry most control characters:
// without it one such object would break every listing of its prefix.
//
// Objects are stored with content type "text/plain; charset=utf-8" when the
// data is valid UTF-8 and "application/octet-stream" otherwise. The only
// user metadata is the write id, which is random and carries nothing secret.
// Requests carry the SDK's default CRC32 checksums; for a server that
// rejects them, pass a Client configured with
// RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired.
package s3
