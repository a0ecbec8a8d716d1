// Package azure is a blob.Store over an Azure Blob Storage container (or
// the Azurite emulator), built on the azblob SDK. Objects are block blobs.
//
// # URL
//
//	azblob://CONTAINER/PREFIX?account=NAME&endpoint=URL
//
// CONTAINER is required. PREFIX (optional, any number of segments) scopes
// the store to the blobs under it: store key k is blob PREFIX/k. The shared
// prefix= parameter of package storeurl is applied the same way, after the
// path prefix. The parameters are:
//
//	account=NAME     the storage account; the service is https://NAME.blob.core.windows.net
//	endpoint=URL     the account's blob service URL, for sovereign clouds
//	                 (https://NAME.blob.core.chinacloudapi.cn) and emulators
//	                 (http://127.0.0.1:10000/devstoreaccount1)
//
// With both, the endpoint must name the account (as its first host label, or
// for an emulator its first path segment). Neither is needed when a
// connection string supplies the account.
//
// # Credentials
//
// A URL never carries a key: one with a user name or password is refused,
// and so is an endpoint with a query (where a SAS token would go).
//
// If the environment variable AZURE_STORAGE_CONNECTION_STRING is set (or
// Options.ConnectionString), the store uses that connection string: its
// account key or SAS token, and its endpoint. account= and endpoint=, if
// given, must then agree with its AccountName and BlobEndpoint, so a URL
// cannot silently write to another account than it names. Otherwise the
// store authenticates with azidentity's DefaultAzureCredential (environment
// service principal, workload identity, managed identity, Azure CLI, Azure
// Developer CLI) against the account's endpoint. For that the identity
// needs the role "Storage Blob Data Contributor", which can be scoped to the
// one container. The container must exist; the store never creates it.
//
// No error returned by this package contains an account key or a SAS
// token: SDK errors name the request's path, never its query.
//
// # Blob names
//
// The blob name of key k is PREFIX/k, except for two characters: Azure
// turns '\' into '/' in blob names, so the store writes '\' as "[]" and
// '[' as "[[" (for example, key `a\[b` is blob "a[][[b"). The escape keeps
// both the keys' byte order and their prefixes. Azure limits blob names to
// 1,024 characters: a key whose blob name (prefix included) would be longer,
// counted in UTF-16 code units, is refused with blob.ErrInvalidKey. Blobs
// whose names are not the name of a valid key under the prefix (written by
// other programs) are invisible to List.
//
// # Versions
//
// A version is the blob's ETag without its quotes (0x8DC...), which Azure
// changes on every write, even of identical bytes. Get, Stat, Put and List
// all report it. Every Put also
// stores a random 128-bit write id in the blob's metadata (cloudmemwrite),
// used only to recognise a retried write (see Guarantees).
//
// # Guarantees
//
// Put(IfAbsent) sends If-None-Match: * and Put(IfVersion) If-Match: "ETAG", so
// the service enforces both: of racing conditional writers exactly one
// wins. Delete(IfVersion) sends If-Match, which Azure and Azurite enforce
// too. Delete(IfAbsent) deletes nothing and sends no request: it reports
// blob.ErrPrecondition (blob.CheckDelete).
//
// The SDK retries a request that failed with a network error or a 5xx
// answer, except a conditional Put, which the store sends again itself:
// after an attempt fails in transit or its condition fails (409
// BlobAlreadyExists, 412 ConditionNotMet) it reads the blob's write id. If
// it is this Put's, an attempt landed, and the Put succeeds with the blob's
// current Info; the blob still absent, or still at the version asked for,
// means the attempt did not land, and the Put is sent again (at most 4
// times); anything else after a failed attempt is an unknown outcome (an
// error that is neither a success nor blob.ErrPrecondition), since the
// attempt may have landed under a rival's write. A failed condition is a
// conflict only on the first attempt.
//
// List pages through the container's flat listing (1,000 names a page) and
// yields keys in byte order. Azure documents its listing order only as
// "alphabetical"; Azurite sorts in UTF-16 code unit order, which differs from
// byte order where a character at or above U+10000 meets one between U+E000
// and U+FFFF. The store corrects for that: it holds back the few keys such a
// later key could still precede, so either order comes out as byte order.
//
// Renames are not atomic: blob.Rename copies and deletes, and
// blob.DeleteTree lists and deletes one blob a request, up to
// blob.DeleteParallel at once (Azure's batch API is not used: Azurite, the
// emulator this store is tested on, answers batch deletes with errors).
//
// Objects are stored with content type "text/plain; charset=utf-8" when the
// data is valid UTF-8 and "application/octet-stream" otherwise. A call whose
// context is done returns an error wrapping ctx.Err().
package azure
