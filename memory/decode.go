package memory

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// This file decodes a command's JSON input under docs/spec.md's rules: keys are
// case-sensitive, the last of duplicate keys wins, null counts as absent, an
// integer is a number with no fraction or exponent that fits in int64,
// unknown fields and the fields of other commands are ignored, and the
// command's own fields are checked in their listed order.
//
// encoding/json cannot be used as is: it replaces invalid UTF-8 and unpaired
// surrogate escapes with U+FFFD, which docs/spec.md requires us to refuse. So
// json.Valid checks the syntax, and a small scanner over the (then known to
// be well-formed) bytes does the rest, without reflection or maps.

// field is an input field the handler knows.
type field int

const (
	fieldCommand field = iota
	fieldPath
	fieldViewRange
	fieldFileText
	fieldOldStr
	fieldNewStr
	fieldInsertLine
	fieldInsertText
	fieldOldPath
	fieldNewPath
	numFields
)

var fieldNames = [numFields]string{
	"command", "path", "view_range", "file_text", "old_str", "new_str",
	"insert_line", "insert_text", "old_path", "new_path",
}

// kind is the JSON type a field must have.
type kind int

const (
	kindString kind = iota
	kindInt
	kindInts // an array of integers
)

// param is one field of a command, in docs/spec.md's order.
type param struct {
	field    field
	kind     kind
	optional bool
}

// params lists each command's fields in the order docs/spec.md checks them.
var params = map[string][]param{
	"view":        {{fieldPath, kindString, false}, {fieldViewRange, kindInts, true}},
	"create":      {{fieldPath, kindString, false}, {fieldFileText, kindString, false}},
	"str_replace": {{fieldPath, kindString, false}, {fieldOldStr, kindString, false}, {fieldNewStr, kindString, true}},
	"insert":      {{fieldPath, kindString, false}, {fieldInsertLine, kindInt, false}, {fieldInsertText, kindString, false}},
	"delete":      {{fieldPath, kindString, false}},
	"rename":      {{fieldOldPath, kindString, false}, {fieldNewPath, kindString, false}},
}

// command is a decoded command. Fields the command does not take are zero.
type command struct {
	name       string  // one of the six commands
	path       string  // path as sent
	viewRange  []int64 // nil when absent
	fileText   string
	oldStr     string
	newStr     string // "" when absent
	insertLine int64
	insertText string
	oldPath    string
	newPath    string
	// data and ifVersion are Write's (api.go): a "write" command comes
	// from no model.
	data      []byte
	ifVersion string

	// key and newKey are the store keys of the command's paths, once
	// resolved (handler.go): key is path's, or rename's old_path's.
	key, newKey string
}

// decode parses input into a command. On failure it returns the error text
// (without "Error: ") the model receives, which echoes an unknown command
// cut at echoLimit code points (echo).
func decode(input []byte, echoLimit int) (command, string) {
	var c command
	raw, msg := scanObject(input)
	if msg != "" {
		return c, msg
	}
	v := raw[fieldCommand]
	switch {
	case v == nil:
		return c, msgRequired(fieldNames[fieldCommand])
	case v[0] != '"':
		return c, msgMustBe(fieldNames[fieldCommand], kindString)
	}
	c.name = unquote(v)
	ps, ok := params[c.name]
	if !ok {
		return c, msgUnknownCommand(echo(c.name, echoLimit))
	}
	for _, p := range ps {
		v := raw[p.field]
		name := fieldNames[p.field]
		if v == nil {
			if p.optional {
				continue
			}
			return c, msgRequiredFor(name, c.name)
		}
		if !c.set(p, v) {
			return c, msgMustBe(name, p.kind)
		}
	}
	return c, ""
}

// set stores the raw JSON value v in the field p names. It reports false
// when v has the wrong type.
func (c *command) set(p param, v []byte) bool {
	switch p.kind {
	case kindInt:
		n, ok := parseInt(v)
		c.insertLine = n // the only integer field
		return ok
	case kindInts:
		list, ok := parseInts(v)
		c.viewRange = list // the only array field
		return ok
	}
	if v[0] != '"' {
		return false
	}
	s := unquote(v)
	switch p.field {
	case fieldPath:
		c.path = s
	case fieldFileText:
		c.fileText = s
	case fieldOldStr:
		c.oldStr = s
	case fieldNewStr:
		c.newStr = s
	case fieldInsertText:
		c.insertText = s
	case fieldOldPath:
		c.oldPath = s
	case fieldNewPath:
		c.newPath = s
	}
	return true
}

// scanObject checks that input is one well-formed JSON object in valid
// UTF-8 with no unpaired surrogate escape, and returns the raw value of each
// known field: nil when absent or null, otherwise the value's bytes (for a
// string, quotes included). The last of duplicate keys wins.
func scanObject(input []byte) (raw [numFields][]byte, msg string) {
	s := scanner{b: input}
	s.skipSpace()
	switch {
	case s.i == len(input):
		return raw, msgInvalidInput("the input is empty")
	case !utf8.Valid(input):
		return raw, msgInvalidInput("the input is not valid UTF-8")
	case !json.Valid(input):
		return raw, msgInvalidInput("the input is not valid JSON")
	case input[s.i] != '{':
		return raw, msgInvalidInput("the input is not a JSON object")
	case hasUnpairedSurrogate(input):
		return raw, msgInvalidInput("the input has an unpaired UTF-16 surrogate escape")
	}
	s.i++ // '{'
	for {
		s.skipSpace()
		if s.i >= len(input) || input[s.i] == '}' {
			return raw, ""
		}
		if input[s.i] == ',' {
			s.i++
			s.skipSpace()
		}
		key := s.value()
		s.skipSpace()
		s.i++ // ':'
		s.skipSpace()
		val := s.value()
		f, ok := fieldOf(key)
		if !ok {
			continue
		}
		if val[0] == 'n' { // null
			val = nil
		}
		raw[f] = val
	}
}

// fieldOf returns the field the raw JSON string key names.
func fieldOf(key []byte) (field, bool) {
	name := key[1 : len(key)-1]
	if bytes.IndexByte(name, '\\') >= 0 {
		name = []byte(unquote(key))
	}
	switch string(name) { // a switch on the conversion does not copy
	case "command":
		return fieldCommand, true
	case "path":
		return fieldPath, true
	case "view_range":
		return fieldViewRange, true
	case "file_text":
		return fieldFileText, true
	case "old_str":
		return fieldOldStr, true
	case "new_str":
		return fieldNewStr, true
	case "insert_line":
		return fieldInsertLine, true
	case "insert_text":
		return fieldInsertText, true
	case "old_path":
		return fieldOldPath, true
	case "new_path":
		return fieldNewPath, true
	}
	return 0, false
}

// scanner walks JSON that json.Valid has accepted. Its methods stay within
// bounds even on other input, but only find values on valid JSON.
type scanner struct {
	b []byte
	i int
}

func (s *scanner) skipSpace() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// value returns the value starting at s.i and moves past it.
func (s *scanner) value() []byte {
	start := s.i
	if s.i >= len(s.b) {
		return s.b[start:]
	}
	switch s.b[s.i] {
	case '"':
		s.skipString()
	case '{', '[':
		depth := 0
		for s.i < len(s.b) {
			switch s.b[s.i] {
			case '"':
				s.skipString()
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
			}
			s.i++
			if depth == 0 {
				break
			}
		}
	default: // a number or a literal
		for s.i < len(s.b) {
			switch s.b[s.i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return s.b[start:s.i]
			}
			s.i++
		}
	}
	return s.b[start:s.i]
}

// skipString moves past the string starting at s.i.
func (s *scanner) skipString() {
	for s.i++; s.i < len(s.b); s.i++ {
		switch s.b[s.i] {
		case '\\':
			s.i++
		case '"':
			s.i++
			return
		}
	}
}

// hasUnpairedSurrogate reports whether a string in the JSON text b holds a
// \uD800–\uDFFF escape that is not a high surrogate followed at once by a
// low one.
func hasUnpairedSurrogate(b []byte) bool {
	if bytes.IndexByte(b, '\\') < 0 {
		return false
	}
	inString := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if !inString {
			inString = c == '"'
			continue
		}
		switch {
		case c == '"':
			inString = false
		case c != '\\' || i+1 >= len(b):
		case b[i+1] != 'u':
			i++ // a one-character escape
		default:
			r := hex4(b[i+2:])
			switch {
			case utf16.IsSurrogate(r) && r < 0xDC00: // high: a low must follow
				if i+11 < len(b) && b[i+6] == '\\' && b[i+7] == 'u' {
					if lo := hex4(b[i+8:]); lo >= 0xDC00 && lo <= 0xDFFF {
						i += 11
						continue
					}
				}
				return true
			case utf16.IsSurrogate(r): // a low one alone
				return true
			}
			i += 5
		}
	}
	return false
}

// hex4 decodes four hex digits, or returns -1.
func hex4(b []byte) rune {
	if len(b) < 4 {
		return -1
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			r = r<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return -1
		}
	}
	return r
}

// unquote decodes a raw JSON string (quotes included) that json.Valid and
// hasUnpairedSurrogate have accepted.
func unquote(raw []byte) string {
	body := raw[1 : len(raw)-1]
	if bytes.IndexByte(body, '\\') < 0 {
		return string(body)
	}
	out := make([]byte, 0, len(body))
	for i := 0; i < len(body); i++ {
		c := body[i]
		if c != '\\' || i+1 >= len(body) {
			out = append(out, c)
			continue
		}
		i++
		switch body[i] {
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r := hex4(body[i+1:])
			i += 4
			if utf16.IsSurrogate(r) && i+6 < len(body) {
				r = utf16.DecodeRune(r, hex4(body[i+3:]))
				i += 6
			}
			out = utf8.AppendRune(out, r)
		default: // '"', '\\', '/'
			out = append(out, body[i])
		}
	}
	return string(out)
}

// parseInt parses a JSON number that is an integer fitting in int64.
func parseInt(v []byte) (int64, bool) {
	if len(v) == 0 || (v[0] != '-' && (v[0] < '0' || v[0] > '9')) || bytes.ContainsAny(v, ".eE") {
		return 0, false
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	return n, err == nil
}

// parseInts parses a JSON array whose elements are all integers.
func parseInts(v []byte) ([]int64, bool) {
	if v[0] != '[' {
		return nil, false
	}
	s := scanner{b: v, i: 1}
	list := []int64{}
	for {
		s.skipSpace()
		if s.i >= len(v) || v[s.i] == ']' {
			return list, true
		}
		if v[s.i] == ',' {
			s.i++
			s.skipSpace()
		}
		n, ok := parseInt(s.value())
		if !ok {
			return nil, false
		}
		list = append(list, n)
	}
}
