package crypt

import (
	"crypto/hkdf"
	"crypto/sha256"
	"encoding/binary"
	"errors"

	"golang.org/x/crypto/chacha20poly1305"
)

// openPayload decrypts and authenticates a whole age payload (age's STREAM:
// a 16-byte nonce, then chunks of up to 64 KiB, each sealed with
// ChaCha20-Poly1305 under a key derived from the file key and the nonce,
// with a counter nonce whose last byte flags the final chunk) into one
// buffer of the plaintext's size. It accepts exactly what age's own reader
// accepts: every chunk but the last full, the last one flagged, and no
// empty last chunk after a first one. It exists because age's reader
// allocates two 64 KiB buffers per file, which for a memory file of a few
// kilobytes costs more than the decryption.
func openPayload(fileKey, payload []byte) ([]byte, error) {
	if len(payload) < ageNonce+ageTag {
		return nil, errors.New("the payload is truncated")
	}
	key, err := hkdf.Key(sha256.New, fileKey, payload[:ageNonce], "payload", chacha20poly1305.KeySize)
	if err != nil {
		return nil, err
	}
	aead, err := chacha20poly1305.New(key)
	if err != nil {
		return nil, err
	}
	body := payload[ageNonce:]
	out := make([]byte, 0, len(body))
	var nonce [chacha20poly1305.NonceSize]byte
	for i := uint64(0); ; i++ {
		chunk := body[:min(len(body), ageChunk+ageTag)]
		body = body[len(chunk):]
		last := len(body) == 0
		if len(chunk) < ageTag || (last && i > 0 && len(chunk) == ageTag) {
			return nil, errors.New("a payload chunk is truncated or empty")
		}
		binary.BigEndian.PutUint64(nonce[3:11], i)
		if last {
			nonce[len(nonce)-1] = 1
		}
		if out, err = aead.Open(out, nonce[:], chunk, nil); err != nil {
			return nil, errors.New("a payload chunk failed to authenticate")
		}
		if last {
			return out, nil
		}
	}
}
