package dirsync

import "testing"

func TestDecideTable(t *testing.T) {
	b := entry{LocalSHA: "L0", RemoteSHA: "R0", Version: "v0"}
	type sides struct {
		loc, rem    bool
		lsha, rsha  string
		base        bool
		want        Op
		whatItMeans string
	}
	cases := []sides{
		{true, true, "L0", "R0", true, "", "unchanged on both sides"},
		{true, true, "L1", "R0", true, OpUpload, "changed here"},
		{true, true, "L0", "R1", true, OpDownload, "changed in the store"},
		{true, true, "X", "X", true, opRecord, "changed alike on both sides"},
		{true, true, "L1", "R1", true, OpConflict, "changed differently on both sides"},
		{true, false, "L1", "", false, OpUpload, "new here"},
		{false, true, "", "R1", false, OpDownload, "new in the store"},
		{true, true, "X", "X", false, opRecord, "new alike on both sides"},
		{true, true, "L1", "R1", false, OpConflict, "new differently on both sides"},
		{false, true, "", "R0", true, OpDeleteRemote, "deleted here, unchanged in the store"},
		{true, false, "L0", "", true, OpDeleteLocal, "deleted in the store, unchanged here"},
		{false, true, "", "R1", true, OpDownload, "deleted here, changed in the store: the change wins"},
		{true, false, "L1", "", true, OpUpload, "changed here, deleted in the store: the change wins"},
		{false, false, "", "", true, opForget, "deleted on both sides"},
	}
	for _, c := range cases {
		it := &item{key: "k", loc: side{present: c.loc, sha: c.lsha}, rem: side{present: c.rem, sha: c.rsha, version: "v0"}, hasBase: c.base}
		if c.base {
			it.base = b
		}
		it.localChanged = c.loc && (!c.base || c.lsha != b.LocalSHA)
		it.remoteChanged = c.rem && (!c.base || c.rsha != b.RemoteSHA)
		if got := decideOne(it); got != c.want {
			t.Errorf("%s: decided %q, want %q", c.whatItMeans, got, c.want)
		}
	}
}
