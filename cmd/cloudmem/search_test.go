package main

import "testing"

// TestSearch runs cloudmem search and compares whole outputs.
func TestSearch(t *testing.T) {
	store := seed(t, storeName(t), map[string]string{
		"notes/tea.md": "Green tea at 80 degrees.\nBlack tea at 95.\n",
		"coffee.md":    "Espresso, no tea.\n",
		".hidden.md":   "tea",
	})
	runCases(t, store, []cliCase{
		// BM25: one tea in 3 words outranks two in 9
		{args: []string{"search", "tea"}, stdout: "Found 2 files for \"tea\" in /memories:\n" +
			"/memories/coffee.md (line 1)\n     1\tEspresso, no «tea».\n" +
			"/memories/notes/tea.md (lines 1, 2)\n     1\tGreen «tea» at 80 degrees.\n"},
		{args: []string{"search", "tea", "--limit", "1", "--path", "/memories/notes"}, stdout: "Found 1 file for \"tea\" in /memories/notes:\n" +
			"/memories/notes/tea.md (lines 1, 2)\n     1\tGreen «tea» at 80 degrees.\n"},
		{args: []string{"search", `"black tea"`, "--json"}, stdout: `{
  "query": "\"black tea\"",
  "dir": "/memories",
  "total": 1,
  "hits": [
    {
      "path": "/memories/notes/tea.md",
      "score": 0.5754,
      "lines": [
        2
      ],
      "line": 2,
      "snippet": "«Black tea» at 95."
    }
  ]
}
`},
		{args: []string{"search", "milk"}, stdout: "No file matches \"milk\" in /memories.\n"},
		{args: []string{"search", "tea", "--limit", "0"}, code: 1, stderr: "cloudmem search: The limit must be between 1 and 100; got 0.\n"},
		{args: []string{"search", "!!"}, code: 1, stderr: "cloudmem search: The query has no words to search for.\n"},
		{args: []string{"search", "tea", "--path", "/tmp"}, code: 1, stderr: "cloudmem search: Path must start with /memories, got: /tmp\n"},
	})
}
