package mcpserver

import (
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// toolDescription tells the model what its memory is and how to keep it.
const toolDescription = `Your memory: a directory of files under /memories that outlives this conversation. You start every conversation remembering nothing of earlier ones, so:
1. At the start of every task, view /memories before doing anything else, then read the files that bear on the task.
2. While you work, write down what a later session would need: what you learned about the user and the project, decisions and why they were made, progress on long tasks and what is left to do. Write as you go, not at the end: the conversation may stop at any moment.
3. Keep it organised: one topic per file, names that say what is inside (/memories/projects/billing.md), edit an existing file rather than add a near-duplicate, and merge or delete what is stale or wrong.
4. Never store secrets (passwords, keys, tokens).

Commands (every path starts with /memories):
- view: list a directory (two levels deep, with sizes) or show a file with line numbers; view_range [first, last] shows part of a file.
- create: make a new file holding file_text; it fails if the path exists.
- str_replace: replace old_str, which must occur exactly once in the file, with new_str (empty or absent deletes it).
- insert: insert insert_text as whole lines after line insert_line (0 puts it at the top).
- delete: remove a file, or a directory with everything in it.
- rename: move a file or directory from old_path to new_path.
An error result starts with "Error:" and says what to change.`

// instructions is what the server tells the client when a session starts.
const instructions = `This server keeps the model's long-term memory as files under /memories. Use the memory tool: view /memories at the start of every task, and record what later sessions will need as you go. The files are also listed as resources (memory:///memories/...), so a user can browse what is remembered.`

// inputSchema is the memory tool's input: a command and that command's
// fields. Only command is required by the schema; the handler reports a
// missing field of a command in its own words.
const inputSchema = `{
  "type": "object",
  "properties": {
    "command": {
      "type": "string",
      "enum": ["view", "create", "str_replace", "insert", "delete", "rename"],
      "description": "What to do. view needs path (view_range optional); create needs path and file_text; str_replace needs path and old_str (new_str optional); insert needs path, insert_line and insert_text; delete needs path; rename needs old_path and new_path."
    },
    "path": {
      "type": "string",
      "description": "The file or directory the command works on, for view, create, str_replace, insert and delete: /memories or a path under it, such as /memories/notes.md."
    },
    "view_range": {
      "type": "array",
      "items": {"type": "integer"},
      "description": "For view of a file: [first, last], the 1-based numbers of the first and last line to show; last may be -1 for the end of the file. Omit it to see the whole file."
    },
    "file_text": {
      "type": "string",
      "description": "For create: the whole content of the new file."
    },
    "old_str": {
      "type": "string",
      "description": "For str_replace: the exact text to replace, including whitespace and line breaks. It must occur exactly once in the file; add surrounding lines to make it unique."
    },
    "new_str": {
      "type": "string",
      "description": "For str_replace: the text that replaces old_str. Empty or absent deletes old_str."
    },
    "insert_line": {
      "type": "integer",
      "minimum": 0,
      "description": "For insert: the line after which insert_text goes; 0 inserts at the top, the file's line count appends at the end."
    },
    "insert_text": {
      "type": "string",
      "description": "For insert: the text to insert, as one or more whole lines."
    },
    "old_path": {
      "type": "string",
      "description": "For rename: the file or directory to move, under /memories."
    },
    "new_path": {
      "type": "string",
      "description": "For rename: where it goes, under /memories. It must not exist yet."
    }
  },
  "required": ["command"]
}`

// tool is the definition of the memory tool. The arguments reach the
// handler unvalidated by the SDK: the handler checks them itself and answers
// in the words the model was trained on.
func tool() *mcp.Tool {
	destructive, openWorld := true, false
	return &mcp.Tool{
		Name:        ToolName,
		Title:       "Memory",
		Description: toolDescription,
		InputSchema: json.RawMessage(inputSchema),
		Annotations: &mcp.ToolAnnotations{
			Title:           "Memory",
			DestructiveHint: &destructive, // delete and rename remove files
			OpenWorldHint:   &openWorld,   // only the memory store
		},
	}
}
