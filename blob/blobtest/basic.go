package blobtest

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/cloudmem/cloudmem/blob"
)

// basicTests cover Get, Stat, Put and Delete on single keys.
var basicTests = []test{
	{"Missing", testMissing},
	{"PutInfo", testPutInfo},
	{"RoundTripEmpty", func(t *testing.T, s blob.Store) { roundTrip(t, s, "empty", []byte{}) }},
	{"RoundTripBinary", func(t *testing.T, s blob.Store) { roundTrip(t, s, "binary", binaryData()) }},
	{"RoundTripLarge", func(t *testing.T, s blob.Store) { roundTrip(t, s, "large", largeData(1<<20)) }},
	{"PutReplaces", testPutReplaces},
	{"CallerOwnsSlices", testCallerOwnsSlices},
	{"PutIfAbsent", testPutIfAbsent},
	{"PutIfVersion", testPutIfVersion},
	{"PutBothConds", testPutBothConds},
	{"Delete", testDelete},
	{"DeleteIfVersion", testDeleteIfVersion},
	{"VersionChangesOnEveryWrite", testVersionChanges},
}

func testMissing(t *testing.T, s blob.Store) {
	wantAbsent(t, s, "missing")
	wantAbsent(t, s, "missing/deeper/key")
	wantErr(t, `Delete("missing")`, s.Delete(t.Context(), "missing", blob.Cond{}), blob.ErrNotExist)
}

func testPutInfo(t *testing.T, s blob.Store) {
	data := []byte("hello, world\n")
	info := put(t, s, "dir/a.txt", data)
	if info.Key != "dir/a.txt" || info.Size != int64(len(data)) || info.Version == "" {
		t.Fatalf("Put Info = {Key:%q Size:%d Version:%q}, want Key \"dir/a.txt\", Size %d and a version",
			info.Key, info.Size, info.Version, len(data))
	}
	st, err := s.Stat(t.Context(), "dir/a.txt")
	if err != nil {
		t.Fatalf("Stat: %v", err)
	}
	if st.Key != info.Key || st.Size != info.Size || st.Version != info.Version {
		t.Fatalf("Stat Info = {Key:%q Size:%d Version:%q}, want Put's {Key:%q Size:%d Version:%q}",
			st.Key, st.Size, st.Version, info.Key, info.Size, info.Version)
	}
	got := wantContent(t, s, "dir/a.txt", data)
	if got.Version != info.Version {
		t.Fatalf("Get Version = %q, want Put's %q", got.Version, info.Version)
	}
}

func roundTrip(t *testing.T, s blob.Store, key string, data []byte) {
	info := put(t, s, key, data)
	if info.Size != int64(len(data)) {
		t.Fatalf("Put Info.Size = %d, want %d", info.Size, len(data))
	}
	wantContent(t, s, key, data)
	st, err := s.Stat(t.Context(), key)
	if err != nil || st.Size != int64(len(data)) {
		t.Fatalf("Stat = Size %d, %v; want Size %d", st.Size, err, len(data))
	}
}

// binaryData holds every byte value, NUL, invalid UTF-8 and CRLF.
func binaryData() []byte {
	var b bytes.Buffer
	for i := range 256 {
		b.WriteByte(byte(i))
	}
	b.WriteString("\x00\x00\xff\xfe\xc3\x28\r\n\r\n\xed\xa0\x80 end")
	return b.Bytes()
}

// largeData is n bytes of a pattern that does not repeat every 256 bytes.
func largeData(n int) []byte {
	data := make([]byte, n)
	x := uint32(2463534242)
	for i := range data {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		data[i] = byte(x)
	}
	return data
}

func testPutReplaces(t *testing.T, s blob.Store) {
	first := put(t, s, "k", []byte("first version, longer"))
	second := put(t, s, "k", []byte("second"))
	if second.Version == first.Version {
		t.Fatalf("replacing Put kept version %q", first.Version)
	}
	got := wantContent(t, s, "k", []byte("second"))
	if got.Version != second.Version {
		t.Fatalf("Get Version = %q, want the second Put's %q", got.Version, second.Version)
	}
	wantKeys(t, s, "", "k")
}

func testCallerOwnsSlices(t *testing.T, s blob.Store) {
	data := []byte("original")
	put(t, s, "k", data)
	copy(data, "XXXXXXXX")
	wantContent(t, s, "k", []byte("original"))
	read, _, err := s.Get(t.Context(), "k", blob.MaxObjectBytes)
	if err != nil {
		t.Fatal(err)
	}
	copy(read, "YYYYYYYY")
	wantContent(t, s, "k", []byte("original"))
	again, _, err := s.Get(t.Context(), "k", blob.MaxObjectBytes)
	if err != nil {
		t.Fatal(err)
	}
	if string(again) != "original" {
		t.Fatalf("a second Get returned %q after the caller changed the first Get's slice", again)
	}
}

func testPutIfAbsent(t *testing.T, s blob.Store) {
	info, err := s.Put(t.Context(), "k", []byte("one"), blob.Cond{IfAbsent: true})
	if err != nil {
		t.Fatalf("Put(IfAbsent) of a new key: %v", err)
	}
	if info.Key != "k" || info.Size != 3 || info.Version == "" {
		t.Fatalf("Put(IfAbsent) Info = %+v", info)
	}
	_, err = s.Put(t.Context(), "k", []byte("two"), blob.Cond{IfAbsent: true})
	wantErr(t, "Put(IfAbsent) of an existing key", err, blob.ErrPrecondition)
	got := wantContent(t, s, "k", []byte("one"))
	if got.Version != info.Version {
		t.Fatalf("failed Put(IfAbsent) changed the version from %q to %q", info.Version, got.Version)
	}
}

func testPutIfVersion(t *testing.T, s blob.Store) {
	v1 := put(t, s, "k", []byte("one"))
	v2, err := s.Put(t.Context(), "k", []byte("two"), blob.Cond{IfVersion: v1.Version})
	if err != nil {
		t.Fatalf("Put(IfVersion) with the current version: %v", err)
	}
	if v2.Version == "" || v2.Version == v1.Version {
		t.Fatalf("Put(IfVersion) returned version %q after %q", v2.Version, v1.Version)
	}
	wantContent(t, s, "k", []byte("two"))

	_, err = s.Put(t.Context(), "k", []byte("three"), blob.Cond{IfVersion: v1.Version})
	wantErr(t, "Put(IfVersion) with a stale version", err, blob.ErrPrecondition)
	if got := wantContent(t, s, "k", []byte("two")); got.Version != v2.Version {
		t.Fatalf("failed Put(IfVersion) changed the version from %q to %q", v2.Version, got.Version)
	}

	_, err = s.Put(t.Context(), "missing", []byte("x"), blob.Cond{IfVersion: v2.Version})
	wantErr(t, "Put(IfVersion) of a missing key", err, blob.ErrPrecondition)
	wantAbsent(t, s, "missing")
}

func testPutBothConds(t *testing.T, s blob.Store) {
	v := put(t, s, "k", []byte("one"))
	if _, err := s.Put(t.Context(), "k", []byte("two"), blob.Cond{IfAbsent: true, IfVersion: v.Version}); err == nil {
		t.Fatal("Put with both IfAbsent and IfVersion succeeded")
	}
	if _, err := s.Put(t.Context(), "new", []byte("two"), blob.Cond{IfAbsent: true, IfVersion: v.Version}); err == nil {
		t.Fatal("Put with both IfAbsent and IfVersion succeeded")
	}
	wantContent(t, s, "k", []byte("one"))
	wantAbsent(t, s, "new")
}

func testDelete(t *testing.T, s blob.Store) {
	putAll(t, s, "a", "b")
	if err := s.Delete(t.Context(), "a", blob.Cond{}); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	wantAbsent(t, s, "a")
	wantKeys(t, s, "", "b")
	wantErr(t, "Delete of a deleted key", s.Delete(t.Context(), "a", blob.Cond{}), blob.ErrNotExist)
	wantErr(t, "Delete(IfAbsent) of an existing key", s.Delete(t.Context(), "b", blob.Cond{IfAbsent: true}), blob.ErrPrecondition)
	wantContent(t, s, "b", []byte("data of b"))
}

func testDeleteIfVersion(t *testing.T, s blob.Store) {
	v1 := put(t, s, "k", []byte("one"))
	v2 := put(t, s, "k", []byte("two"))
	wantErr(t, "Delete(IfVersion) with a stale version", s.Delete(t.Context(), "k", blob.Cond{IfVersion: v1.Version}), blob.ErrPrecondition)
	wantContent(t, s, "k", []byte("two"))
	if err := s.Delete(t.Context(), "k", blob.Cond{IfVersion: v2.Version}); err != nil {
		t.Fatalf("Delete(IfVersion) with the current version: %v", err)
	}
	wantAbsent(t, s, "k")
	err := s.Delete(t.Context(), "k", blob.Cond{IfVersion: v2.Version})
	if !errors.Is(err, blob.ErrNotExist) && !errors.Is(err, blob.ErrPrecondition) {
		t.Fatalf("Delete(IfVersion) of a missing key error = %v, want ErrNotExist or ErrPrecondition", err)
	}
}

func testVersionChanges(t *testing.T, s blob.Store) {
	seen := map[string]string{} // version -> the write that produced it
	note := func(what, v string) {
		t.Helper()
		if v == "" {
			t.Fatalf("%s returned an empty version", what)
		}
		if prev, ok := seen[v]; ok {
			t.Fatalf("%s returned version %q, already returned by %s", what, v, prev)
		}
		seen[v] = what
	}
	same := []byte("same bytes")
	for i := range 5 {
		note("Put #"+strings.Repeat("I", i+1)+" of identical bytes", put(t, s, "k", same).Version)
	}
	prev := put(t, s, "k", same)
	note("Put #VI of identical bytes", prev.Version)
	info, err := s.Put(t.Context(), "k", same, blob.Cond{IfVersion: prev.Version})
	if err != nil {
		t.Fatal(err)
	}
	note("Put(IfVersion) of identical bytes", info.Version)
	if err := s.Delete(t.Context(), "k", blob.Cond{}); err != nil {
		t.Fatal(err)
	}
	info, err = s.Put(t.Context(), "k", same, blob.Cond{IfAbsent: true})
	if err != nil {
		t.Fatal(err)
	}
	note("Put(IfAbsent) of identical bytes after Delete", info.Version)
	if err := blob.Rename(t.Context(), s, "k", "moved"); err != nil {
		t.Fatal(err)
	}
	if err := blob.Rename(t.Context(), s, "moved", "k"); err != nil {
		t.Fatal(err)
	}
	st, err := s.Stat(t.Context(), "k")
	if err != nil {
		t.Fatal(err)
	}
	note("Rename away and back", st.Version)
}
