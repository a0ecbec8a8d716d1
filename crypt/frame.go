package crypt

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"

	"filippo.io/age"
)

// The stored form of an object (see the package documentation):
//
//	prelude:  magic, spaces, '\n', then the age header; kind.prelude() bytes in all
//	payload:  the rest of the age file, which decrypts to the frame
//	frame:    version(1) keySet(16) keyLen(2, big endian) key content mac(32)
const (
	magic        = "cloudmem-age/v1"
	frameVersion = 1
	keySetLen    = 16
	macLen       = sha256.Size
	frameFixed   = 1 + keySetLen + 2 + macLen // frame bytes besides key and content

	// age's STREAM payload: a 16-byte nonce, then 64 KiB chunks each
	// followed by a 16-byte Poly1305 tag; an empty plaintext is one
	// empty chunk.
	ageNonce = 16
	ageChunk = 64 << 10
	ageTag   = 16

	maxPrelude = 8192 // the largest kind.prelude()
)

// macLabel separates frame MACs from any other use of the integrity key.
const macLabel = "cloudmem-age/v1 frame\n"

// frame is a decrypted, parsed frame. Nothing in it is verified until
// verify succeeds.
type frame struct {
	keySet  [keySetLen]byte
	key     string
	content []byte
	signed  []byte // the bytes the MAC covers
	mac     []byte
}

// sealed is an object as seal made it: its stored form, and the file key
// of its age header with the header's hash, as decrypt would find them.
type sealed struct {
	data    []byte
	header  [sha256.Size]byte
	fileKey []byte
}

// remember tells cache the file key of s's header (nil: nothing), so that
// reading the object back needs no key agreement.
func (s sealed) remember(cache *fileKeyCache) { cache.put(s.header, s.fileKey) }

// keepFileKey is a recipient that hands the file key age wraps on to the
// recipient it holds, and keeps a copy.
type keepFileKey struct {
	age.Recipient
	fileKey *[]byte
}

func (k keepFileKey) Wrap(fileKey []byte) ([]*age.Stanza, error) {
	*k.fileKey = bytes.Clone(fileKey)
	return k.Recipient.Wrap(fileKey)
}

// WrapWithLabels keeps the labels of the recipient it holds, which age
// compares across recipients: one without labels has none.
func (k keepFileKey) WrapWithLabels(fileKey []byte) ([]*age.Stanza, []string, error) {
	*k.fileKey = bytes.Clone(fileKey)
	if r, ok := k.Recipient.(age.RecipientWithLabels); ok {
		return r.WrapWithLabels(fileKey)
	}
	s, err := k.Recipient.Wrap(fileKey)
	return s, nil, err
}

// seal returns the stored form of content under key, encrypted to kr's
// recipients and authenticated with macKey.
func seal(kr *keyring, macKey []byte, key string, content []byte) (sealed, error) {
	if len(key) > 0xffff {
		return sealed{}, fmt.Errorf("crypt: key of %d bytes is too long to frame", len(key))
	}
	f := make([]byte, 0, frameFixed+len(key)+len(content))
	f = append(f, frameVersion)
	f = append(f, kr.keySet[:]...)
	f = binary.BigEndian.AppendUint16(f, uint16(len(key)))
	f = append(f, key...)
	f = append(f, content...)
	f = append(f, frameMAC(macKey, f)...)

	var ct bytes.Buffer
	ct.Grow(kr.kind.prelude() + ageNonce + len(f) + ageTag*(len(f)/ageChunk+1))
	var fileKey []byte
	recipients := slices.Clone(kr.recipients)
	if len(recipients) > 0 { // one is enough: every recipient wraps the same file key
		recipients[0] = keepFileKey{Recipient: recipients[0], fileKey: &fileKey}
	}
	w, err := age.Encrypt(&ct, recipients...)
	if err != nil {
		return sealed{}, fmt.Errorf("crypt: encrypting %q: %w", key, err)
	}
	if _, err := w.Write(f); err != nil {
		return sealed{}, fmt.Errorf("crypt: encrypting %q: %w", key, err)
	}
	if err := w.Close(); err != nil {
		return sealed{}, fmt.Errorf("crypt: encrypting %q: %w", key, err)
	}
	hdr := headerLen(ct.Bytes())
	pad := kr.kind.prelude() - len(magic) - 1 - hdr
	if pad < 0 {
		// compile checked the header size; age changed under us.
		return sealed{}, fmt.Errorf("crypt: age header of %d bytes does not fit the format", hdr)
	}
	out := make([]byte, 0, len(magic)+pad+1+ct.Len())
	out = append(out, magic...)
	out = append(out, strings.Repeat(" ", pad)...)
	out = append(out, '\n')
	return sealed{data: append(out, ct.Bytes()...), header: sha256.Sum256(ct.Bytes()[:hdr]), fileKey: fileKey}, nil
}

// headerLen returns the length of the header of the age file ageFile, which
// age itself wrote: the header ends with the line "--- " and its MAC. It
// returns a length that fits no prelude when there is no such line.
func headerLen(ageFile []byte) int {
	i := bytes.Index(ageFile, []byte("\n--- "))
	if i < 0 {
		return maxPrelude
	}
	end := bytes.IndexByte(ageFile[i+1:], '\n')
	if end < 0 {
		return maxPrelude
	}
	return i + 1 + end + 1
}

func frameMAC(macKey, signed []byte) []byte {
	h := hmac.New(sha256.New, macKey)
	h.Write([]byte(macLabel))
	h.Write(signed)
	return h.Sum(nil)
}

// decrypt checks the format line of the stored object data, decrypts it with
// ids (age.DecryptHeader checks the header's MAC, openPayload every chunk's
// tag), or with the file key cache remembers for its header (nil: none),
// and parses the frame. It decrypts the whole object before returning,
// so a truncated or altered object yields an error and no content. The
// frame is not verified yet. Errors are *Error.
func decrypt(ids []age.Identity, cache *fileKeyCache, key string, data []byte) (*frame, error) {
	if !bytes.HasPrefix(data, []byte(magic)) {
		return nil, notEncrypted(key)
	}
	head := data[:min(len(data), maxPrelude)]
	nl := bytes.IndexByte(head, '\n')
	if nl < 0 || strings.Trim(string(head[len(magic):nl]), " ") != "" {
		return nil, corrupt(key, "its format line is malformed", nil)
	}
	ageFile := data[nl+1:]
	hdr := headerLen(ageFile)
	if hdr > len(ageFile) {
		return nil, corrupt(key, "its age header is damaged", nil)
	}
	sum := sha256.Sum256(ageFile[:hdr])
	fileKey, ok := cache.get(sum)
	if !ok {
		var err error
		fileKey, err = age.DecryptHeader(ageFile[:hdr], ids...)
		if err != nil {
			var noMatch *age.NoIdentityMatchError
			if errors.As(err, &noMatch) {
				return nil, wrongKey(key, err)
			}
			return nil, corrupt(key, "its age header is damaged", err)
		}
		cache.put(sum, fileKey)
	}
	plain, err := openPayload(fileKey, ageFile[hdr:])
	if err != nil {
		return nil, corrupt(key, "its ciphertext is truncated or altered", err)
	}
	return parseFrame(key, plain)
}

func parseFrame(key string, plain []byte) (*frame, error) {
	if len(plain) < frameFixed {
		return nil, corrupt(key, "its frame is too short", nil)
	}
	if plain[0] != frameVersion {
		return nil, corrupt(key, fmt.Sprintf("its frame has unknown version %d", plain[0]), nil)
	}
	f := &frame{}
	copy(f.keySet[:], plain[1:])
	rest := plain[1+keySetLen:]
	n := int(binary.BigEndian.Uint16(rest))
	rest = rest[2:]
	if len(rest) < n+macLen {
		return nil, corrupt(key, "its frame is too short", nil)
	}
	f.key = string(rest[:n])
	f.content = rest[n : len(rest)-macLen]
	f.signed = plain[:len(plain)-macLen]
	f.mac = plain[len(plain)-macLen:]
	return f, nil
}

// verify checks the frame's MAC with macKey, then that it belongs to key.
func (f *frame) verify(macKey []byte, key string) error {
	if !hmac.Equal(f.mac, frameMAC(macKey, f.signed)) {
		return corrupt(key, "its MAC does not verify (altered, or written without the store's integrity key)", nil)
	}
	if f.key != key {
		return corrupt(key, "its frame belongs to another key", nil)
	}
	return nil
}

// storedSize is the inverse of plaintextSize: the stored size of a content of
// size bytes under a key of keyLen bytes with a prelude of prelude bytes.
func storedSize(size int64, keyLen, prelude int) int64 {
	f := frameFixed + int64(keyLen) + size
	chunks := max(1, (f+ageChunk-1)/ageChunk)
	return int64(prelude) + ageNonce + f + chunks*ageTag
}

// plaintextSize returns the content size of a stored object of size stored
// under a key of keyLen bytes, written for recipients whose prelude is
// prelude bytes. ok is false when no content size gives that stored size
// (the object is not in this format, or was written for another kind).
func plaintextSize(stored int64, keyLen, prelude int) (size int64, ok bool) {
	enc := stored - int64(prelude) - ageNonce // chunks with their tags
	if enc < ageTag {
		return 0, false
	}
	chunks := (enc + ageChunk + ageTag - 1) / (ageChunk + ageTag)
	f := enc - chunks*ageTag // frame size
	if want := max(1, (f+ageChunk-1)/ageChunk); chunks != want {
		return 0, false
	}
	size = f - frameFixed - int64(keyLen)
	return size, size >= 0
}
