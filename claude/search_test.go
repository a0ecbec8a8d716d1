package claude_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/claude"
	"github.com/cloudmem/cloudmem/memory"
	"github.com/cloudmem/cloudmem/search"
)

// TestSearchTool: the search tool finds what the memory tool just wrote,
// and its definition is docs/spec.md's, compared whole.
func TestSearchTool(t *testing.T) {
	ctx := context.Background()
	store := mem.New(nil)
	x := search.New(store, nil)
	h, err := memory.New(store, memory.Options{Observer: x.Observer(nil)})
	if err != nil {
		t.Fatal(err)
	}
	mt, st := claude.NewTool(h), claude.NewSearchTool(x)
	if _, err := mt.Execute(ctx, json.RawMessage(`{"command":"create","path":"/memories/prefs.md","file_text":"Answer in French.\n"}`)); err != nil {
		t.Fatal(err)
	}
	blocks, err := st.Execute(ctx, json.RawMessage(`{"query":"french"}`))
	if err != nil || len(blocks) != 1 || blocks[0].OfText == nil ||
		blocks[0].OfText.Text != "Found 1 file for \"french\" in /memories:\n/memories/prefs.md (line 1)\n     1\tAnswer in «French»." {
		t.Errorf("search: %+v, %v", blocks, err)
	}
	blocks, err = st.Execute(ctx, json.RawMessage(`{"query":"french","limit":500}`))
	if blocks != nil || err == nil || err.Error() != "The limit must be between 1 and 100; got 500." {
		t.Errorf("bad limit: %+v, %v", blocks, err)
	}
	if _, err := claude.NewSearchTool(nil).Execute(ctx, json.RawMessage(`{"query":"x"}`)); err == nil ||
		err.Error() != "The memory storage failed: no store is configured" {
		t.Errorf("nil index: %v", err)
	}
	def, err := json.Marshal(claude.SearchToolParam())
	if err != nil {
		t.Fatal(err)
	}
	want := `{"input_schema":{"properties":{"limit":{"description":"How many files to return, best first; 10 if left out.","maximum":100,"minimum":1,"type":"integer"},"path":{"description":"The directory or file to search: /memories, the default, or a path under it.","type":"string"},"query":{"description":"The words to look for.","type":"string"}},"required":["query"],"type":"object"},"name":"memory_search","description":` + mustJSON(search.ToolDescription) + `}`
	if string(def) != want {
		t.Errorf("definition:\n%s\nwant\n%s", def, want)
	}
}

func mustJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
