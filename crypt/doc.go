// Package crypt is a blob.Store that wraps any other Store and encrypts
// every object with age (filippo.io/age), so that the storage provider, and
// anyone who reads the bucket, sees ciphertext only.
//
//	ids, err := crypt.LoadIdentities("/etc/agent/age-identity.txt")
//	rcpts, err := crypt.ParseRecipients("age1app...", "age1escrow...")
//	s, err := crypt.Wrap(inner, crypt.Config{Recipients: rcpts, Identities: ids})
//
// # Threat model
//
// The attacker can read, and possibly write, the inner store, and knows the
// public recipients, but holds no identity. Protected: the content of every
// object (confidentiality); its integrity (an altered or truncated object is
// refused as a whole, and no plaintext comes back); its binding to its key
// (a ciphertext copied or swapped to another key is refused); and forgery
// (an object written with only the public recipients is refused, because
// its MAC needs the store's integrity secret, which only identity holders
// can read). The integrity key object itself is authenticated by something
// the attacker lacks (see below): replacing it in a store in use, or
// planting one in an empty store before its first use, is refused with
// ErrUntrustedKey, never accepted.
//
// Not protected: object names (keys are stored in the clear; a name can
// leak what a memory is about, so choose names accordingly), sizes (a
// plaintext size is the stored size minus a fixed overhead), access times
// and patterns, and deletion or rollback of whole objects: an attacker with
// write access can delete an object, or put back an older valid ciphertext
// of the same key, and reads will accept it. Rollback is not closed: it
// would need state the store cannot keep honestly on its own (a version
// list the attacker could roll back too) or state kept outside it. In the
// same way, an attacker who can write two stores whose key objects were
// made by the same identity can put one store's key object and objects in
// place of the other's (a whole-store substitution, which pinning each
// store's fingerprint refuses).
//
// A store opened without encryption must not serve an encrypted one:
// storage layers that open stores by configuration wrap plain stores with
// blob.RefuseEncrypted, which refuses every call on a store that holds the
// key object (blob.EncryptionKeyName) with blob.ErrEncrypted.
//
// # Format
//
// An object is stored as:
//
//	"cloudmem-age/v1" spaces "\n"    the format line, padded with spaces
//	age header                      stanzas for every recipient, then age's header MAC
//	age payload                     16-byte nonce, 64 KiB chunks each with a 16-byte tag
//
// The format line and the age header together take exactly 1024 bytes for
// X25519 recipients (room for MaxX25519Recipients) and 8192 bytes for
// post-quantum ones (MaxHybridRecipients). The line without its padding is
// the first thing a reader checks (its absence gives ErrNotEncrypted).
// Removing the first line leaves a standard age file, so an escrow holder
// can recover an object without this package:
//
//	tail -n +2 OBJECT | age -d -i escrow.txt > frame
//
// and the content is the frame's bytes from 19+len(key) up to its last 32.
//
// The age payload decrypts to a frame:
//
//	version  1 byte, 1
//	key set  16 bytes naming the recipients it was encrypted to: the start of SHA-256 over
//	         "cloudmem-age key set\n" and the sorted recipient strings joined by "\n"
//	key len  2 bytes, big endian
//	key      the object's key
//	content  the object's data
//	MAC      32 bytes: HMAC-SHA256, keyed with the store's MAC key, over
//	         "cloudmem-age/v1 frame\n" and every frame byte before it
//
// A read decrypts the whole object, checks the MAC with the store's
// integrity key, then checks that the frame's key is the key read. The
// fixed layout makes the stored size a function of the content size and
// the key length only, so Stat and List report plaintext sizes without
// reading anything: content = stored − prelude − 16 − 16·chunks − 51 −
// len(key), where chunks = max(1, ⌈(content+51+len(key)) / 64 KiB⌉). An
// object written for the other kind of recipients (during a Rekey from
// X25519 to post-quantum keys, say) shows a wrong size until it is
// rekeyed; a stored size that no content size produces (a plain object
// written around the wrapper, say) shows as 0.
//
// # The integrity key object
//
// The MAC key is derived (HKDF-SHA256) from a 32-byte random secret kept in
// one bookkeeping object, ".cloudmem/crypt-key" (blob.EncryptionKeyName),
// stored in the same format and encrypted to every recipient, so the escrow
// identity can verify objects too. Its content is the secret followed by up
// to 16 vouchers of 32 bytes: HMAC-SHA256 of the secret keyed with a key
// derived (HKDF-SHA256) from one identity's private key. Only a holder of
// that identity can make or check its voucher; the recipients' public keys
// do not help, so an attacker can encrypt a key object of their own to the
// recipients but cannot vouch for it.
//
// A store trusts the key object it reads when Config.KeyFingerprint is
// empty and one of its identities vouched for it, or when its fingerprint
// (Fingerprint: 16 bytes of SHA-256 over the secret, in hex, which reveals
// nothing of the secret) is the pinned Config.KeyFingerprint; otherwise every
// read and write fails with ErrUntrustedKey, whose message names the
// fingerprint found. That choice, rather than a signature by a configured
// recipient, keeps the common case free of configuration (the application
// key that created the store vouches for it, so a replaced or planted key is
// refused with no setting at all) and still covers every other reader, of
// any identity type, with one public value: pin the fingerprint where the
// store is read by an identity that did not create it (the escrow key, a
// second application key, plugin identities, the new key after a Rekey that
// did not hold it), or that was created by an earlier version of this
// package, whose key objects carry no vouchers. Fingerprint returns the value
// to pin; a store logs it (at Debug level) when it creates its key.
//
// The first write through a store creates the key object with
// Put(IfAbsent), vouched for by every identity of the Config; of processes
// racing to create it, one wins and the others read (and check) the
// winner's. It is never created for a store that already holds objects
// (that would make each of them fail its check): the write fails with
// ErrCorrupt instead; nor for a store whose fingerprint is pinned (a new key
// could not match): ErrUntrustedKey. Each store reads it once and keeps it
// in memory. Through the wrapper the key is reserved: Get, Stat, Put and
// Delete of it fail with blob.ErrInvalidKey and List skips it. The name
// ".cloudmem" is reserved for such bookkeeping; the memory handler never
// exposes it.
//
// # Keys
//
// Keys are age keys: X25519 by default (GenerateIdentity), post-quantum
// hybrid keys (GenerateHybridIdentity, age1pq1...) accepted, but not both
// kinds in one Config, since age refuses to encrypt to a mix (Validate and
// Wrap reject such a Config before anything is written). Identities come
// from a file (LoadIdentities) or from the environment variable
// CLOUDMEM_AGE_IDENTITY, which holds the identity file's content
// (IdentitiesFromEnv); never from a store URL. Recipients are public and
// may appear in configuration.
//
// Rekey re-encrypts a whole store to a new recipient set (to rotate the
// application key, or to add or drop an escrow key), one object at a time
// with compare-and-swap writes, and can be resumed. The integrity secret
// stays the same across a Rekey (and so does its fingerprint); it is
// re-encrypted to the new recipients first, so old MACs stay valid, and
// every identity the Rekey holds adds its voucher. To rotate to a new
// application key, give Rekey the new identity too (in to), or pin the
// fingerprint in the new configuration.
//
// No error message or log line of this package contains key material or
// plaintext. Errors about objects are *Error values whose ModelCause method
// gives the short text the memory handler shows the model.
package crypt
