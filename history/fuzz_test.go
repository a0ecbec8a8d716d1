package history

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

// FuzzDecodeRecord feeds any bytes to the record parser: it must not
// panic, and a record it accepts encodes back to one that decodes the same.
// Seeds: records of each kind as the store writes them.
func FuzzDecodeRecord(f *testing.F) {
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	for _, h := range []header{
		{Format: recordFormat, ID: "1a2b3c4d5e6f7a8b", Op: OpCreated, Path: "a.md", Time: at, Actor: "x", Size: 3, SHA256: "ab", Ver: "1"},
		{Format: recordFormat, ID: "1a2b3c4d5e6f7a8c", Op: OpDeleted, Path: "a.md", Time: at, Prev: "1"},
		{Format: recordFormat, ID: "1a2b3c4d5e6f7a8d", Op: OpRenamed, Path: "b.md", From: "a.md", Time: at, Redacted: &Redaction{Actor: "y", Time: at}},
	} {
		data, err := encodeRecord(&h, []byte("abc"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("{}\n"))
	f.Add([]byte("no header line"))
	f.Fuzz(func(t *testing.T, data []byte) {
		h, content, err := decodeRecord(data)
		if err != nil {
			return
		}
		again, err := encodeRecord(&h, content)
		if err != nil {
			t.Fatalf("an accepted record does not encode: %v", err)
		}
		h2, content2, err := decodeRecord(again)
		if err != nil {
			t.Fatalf("a re-encoded record does not decode: %v", err)
		}
		j1, _ := json.Marshal(h)
		j2, _ := json.Marshal(h2)
		if !bytes.Equal(j1, j2) || !bytes.Equal(content, content2) {
			t.Fatalf("the record changed in a round trip:\n%s\n%s", j1, j2)
		}
	})
}
