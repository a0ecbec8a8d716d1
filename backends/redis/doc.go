// Package redis is a blob.Store on Redis, one server or a Redis Cluster,
// over the go-redis v9 client. Several processes may share one store: every
// write is a single Lua script, so conditions, versions and the listing
// index are updated together by the server.
//
// # URL
//
//	redis://[USER:PASSWORD@]HOST:PORT[/DB][?prefix=P]          one server
//	rediss://[USER:PASSWORD@]HOST:PORT[/DB][?prefix=P]         one server, over TLS
//	redis-cluster://[USER:PASSWORD@]HOST:PORT,HOST:PORT,...[?prefix=P]   Redis Cluster
//	rediss-cluster://...                                       Redis Cluster, over TLS
//
// DB is the database number (default 0; a cluster has only 0). A cluster URL
// lists one or more nodes to start from (HOST:PORT, host names or IPv4
// addresses); the client discovers the others. The query parameters are:
//
//	prefix=P                  the store's name within the database (Options.Prefix); default "cloudmem"
//	client_name=NAME          CLIENT SETNAME for every connection
//	dial_timeout=D            connect timeout (a duration such as 2s; a bare number is seconds)
//	read_timeout=D            per-command read timeout
//	write_timeout=D           per-command write timeout
//	pool_size=N               connections per server
//	max_retries=N             retries of a command after a network error (-1: none)
//
// The last six are go-redis options, with go-redis defaults. Any other
// parameter is an error naming it, except the ones storeurl handles for every
// scheme (readonly, encrypt, ...). A store opened from a URL owns its client
// and implements io.Closer; a store from Open uses the caller's client.
//
// # Credentials
//
// The password comes from the URL, or when the URL has none from the
// environment variable REDIS_PASSWORD (PasswordEnv), so that it need not be
// written into a configuration string. A user name (Redis 6 ACL) comes from
// the URL only. No error returned by this package contains the password.
//
// # Keys
//
// A store with prefix P keeps each object in a hash named cm:{P}:o:KEY
// (fields d: data, v: version, s: size, m: modification time), the sorted
// set cm:{P}:idx of its keys (all scores 0, so that it sorts by name), the
// version counter cm:{P}:seq, and, for a minute after each write, a small
// cm:{P}:w:ID key that lets a retried write find its own outcome; while a
// key is locked (blob.Lock), its lock cm:{P}:l:KEY and the list
// cm:{P}:l:KEY\xffwake that wakes its waiters. Nothing else is written, and
// the store never runs KEYS or SCAN.
//
// Stores with different prefixes never share a key: P may not contain '{'
// or '}', so the first '}' of any name ends the prefix and P can be read
// back from the name; "a" and "a:b" give cm:{a}:... and cm:{a:b}:..., which
// differ at the byte after "a". A prefix is a valid blob key (see package
// blob); surrounding '/' are dropped, so prefix=agents/7/ is agents/7.
// Unlike blob.Prefix, prefixes do not nest: prefix=agents does not see
// the keys of prefix=agents/7.
//
// # Guarantees
//
// Put, Delete, Rename and DeleteTree each run as one Lua script, which makes
// its checks before its first write (but for removing the stale index
// entries it meets, which no call can see; see below): a condition
// (IfAbsent, IfVersion) is enforced by the server, and of N racing
// conditional writers exactly one wins. Rename (a key or a whole tree) and DeleteTree are atomic: another
// client sees the tree entirely before or entirely after. Every write takes
// a new version from the store's counter, so a version is never reused, even
// by a key that is deleted and created again. Modified is the server's
// clock. A name is never both an object and a directory
// (blob.Traits.ExclusiveNames): a Put that creates "a/b" while "a" is an
// object, or "a" while "a/b" is, and a Rename onto such a name, fail with
// blob.ErrPrecondition and change nothing, however the writes race, as on
// a file system; the memory handler then makes no look of its own after a
// create, which is one round trip.
//
// go-redis resends a command whose connection broke after sending it. Each
// write carries a random id under which the script records its outcome for
// one minute, so a resent write returns the outcome of the first rather
// than running again (a create that landed is not reported as "exists").
//
// List reads the index 1,000 keys per script call, together with those
// keys' metadata, so each page of 1,000 is a consistent snapshot, but a
// listing of more than 1,000 keys is not: a tree renamed while it is being
// listed can then be seen at neither or both places. An index member that
// is not a valid blob key (another program's write) is skipped.
//
// An index entry whose object is gone (a key evicted by a server that
// evicts, or deleted by another program) is no object: Get and Stat report
// the key missing, List leaves it out, Delete answers as for a missing key,
// and it keeps no name from being created, as an object or a directory. Rename
// moves only objects that exist: when src's is gone it moves the directory
// src/ instead, and when nothing at or under src exists it fails with
// blob.ErrNotExist and moves nothing; DeleteTree of a directory whose
// objects are all gone likewise fails with blob.ErrNotExist. The first
// script to meet such an entry removes it: List; Delete of its key; Rename
// from it or from a directory above it; DeleteTree of a directory above
// it; and a create of, or a Rename onto, a name above it, whose check for
// objects under the new name reads the index. The script finds the object
// missing and removes the entry in one atomic run, so an entry whose
// object a racing writer has just created is never removed. This costs no
// request: the index is mended inside the calls' own scripts. A List by a
// user whose ACL refuses writes leaves the entries in place and still
// lists.
//
// The store is a blob.Locker shared by every client of the prefix. A lock
// is a 5-second lease that its holder renews every second until it
// unlocks, so a holder that dies (kill -9, a lost host) keeps the other
// writers of that key out for at most 5 s. A holder that loses its lease
// anyway (the server unreachable for 5 s) cannot write the key: while the
// lock is held, the store's Put of that key checks the lease in the same
// script and, when it is lost, changes nothing and fails with
// blob.ErrPrecondition.
//
// A call returns as soon as its context is done, with an error wrapping
// ctx.Err(), whether or not the client was created with
// ContextTimeoutEnabled. A write cancelled while its script was in flight
// may or may not have happened.
//
// # Redis Cluster
//
// Every key of one store carries the hash tag {P}, so a store lives in a
// single hash slot and every script is legal on a cluster; a store's load
// and size fall on one shard. Spread many agents over a cluster by giving
// each its own prefix.
//
// # Memory
//
// Measured on Redis 7.0 (64-bit) with 2,000 files named like
// notes/project-0001.md: each file costs its content plus about 600 bytes
// (hash and index entry), or about 350 bytes in all for files of at most
// 64 bytes, which Redis stores in its compact encoding. Persistence is the
// server's configuration (RDB or AOF): with neither, memories do not survive
// a restart of Redis.
//
// # Requirements
//
// Redis 5.0 or later (the scripts call TIME, which needs script effects
// replication, the default since 5.0); tested against Redis 7.0, one server
// and a cluster. The server must not evict keys (maxmemory-policy
// noeviction, the default): an evicted key is a lost memory (its index
// entry is removed when met, see Guarantees), and an evicted index would
// hide the store's files from List.
package redis
