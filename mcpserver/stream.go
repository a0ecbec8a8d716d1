package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	sjson "github.com/segmentio/encoding/json"
)

// A StreamTransport is an mcp.Transport over a byte stream, such as a
// process's stdin and stdout, with the wire format of the SDK's
// mcp.IOTransport: one JSON-RPC message (or, before protocol version
// 2025-06-18, one batch) per line in, one per line out, the same bytes for
// the same messages. It does less work per message than mcp.IOTransport:
// the SDK's connection decodes each line three times, each time into a new
// 32 KiB buffer, and re-validates each answer's JSON once more on the way
// out; a StreamTransport decodes a request once, with the SDK's own decoder
// and settings, and writes an answer's result as the SDK's JSON-RPC layer
// encoded it. One difference: the SDK's connection waits for an answer to
// each notification of a batch, so it never answers a batch that holds
// one; a StreamTransport answers the batch's calls. Anything unusual (a response from the client, an error, a
// batch, a string id) takes the SDK's own functions (jsonrpc.DecodeMessage,
// jsonrpc.EncodeMessage), so it is handled exactly as mcp.IOTransport
// handles it.
//
// Server.Run serves an *mcp.IOTransport or *mcp.StdioTransport through a
// StreamTransport. A StreamTransport serves one connection.
type StreamTransport struct {
	Reader io.ReadCloser
	Writer io.WriteCloser
	// MaxLineLength bounds the bytes buffered to decode one message: 0
	// means mcp.DefaultMaxLineLength, a negative value no bound.
	MaxLineLength int
}

// Connect implements mcp.Transport. Closing the connection closes Reader
// and Writer.
func (t *StreamTransport) Connect(context.Context) (mcp.Connection, error) {
	return newStreamConn(t.Reader, t.Writer, t.MaxLineLength), nil
}

// streamTransport is the StreamTransport that serves t, if t is one of the
// SDK's stream transports, or t.
func streamTransport(t mcp.Transport) mcp.Transport {
	switch t := t.(type) {
	case *mcp.IOTransport:
		return &StreamTransport{Reader: t.Reader, Writer: t.Writer, MaxLineLength: t.MaxLineLength}
	case *mcp.StdioTransport:
		return &StreamTransport{Reader: os.Stdin, Writer: nopCloser{os.Stdout}, MaxLineLength: t.MaxLineLength}
	}
	return t
}

// nopCloser is os.Stdout for a StdioTransport, which does not close it.
type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// protocol20250618 is the first protocol version without JSON-RPC batches.
const protocol20250618 = "2025-06-18"

// errTooLarge is the error of a message longer than the line limit.
var errTooLarge = errors.New("mcpserver: an inbound JSON-RPC message exceeded the maximum line length")

type lineOrErr struct {
	raw json.RawMessage
	err error
}

// streamConn is the mcp.Connection of a StreamTransport. Read is called by
// one goroutine at a time, Write by many.
type streamConn struct {
	r        io.ReadCloser
	w        io.WriteCloser
	incoming chan lineOrErr
	closed   chan struct{}
	queue    []jsonrpc.Message // the rest of the last batch read

	closeOnce sync.Once
	closeErr  error

	mu       sync.Mutex // guards what follows; writes are serialised under it
	out      []byte     // the buffer of the last answer written
	initID   jsonrpc.ID // the initialize request, until it is answered
	protocol string     // the negotiated protocol version, once initialized
	batches  map[jsonrpc.ID]*batch
}

// A batch collects the answers to the calls of one inbound batch, which go
// out together, in the calls' order, when the last is answered.
type batch struct {
	pending int
	index   map[jsonrpc.ID]int
	answers []*jsonrpc.Response
}

func newStreamConn(r io.ReadCloser, w io.WriteCloser, limit int) *streamConn {
	if limit == 0 {
		limit = mcp.DefaultMaxLineLength
	}
	c := &streamConn{r: r, w: w, incoming: make(chan lineOrErr), closed: make(chan struct{})}
	// A goroutine reads, so that Close ends a Read that waits for input
	// even on a stream whose Read Close cannot interrupt (a terminal).
	go c.readLoop(limit)
	return c
}

// readLoop sends each JSON value of the stream to Read, then the error
// that ended the stream.
func (c *streamConn) readLoop(limit int) {
	var lr *limitReader
	var src io.Reader = c.r
	if limit > 0 {
		lr = &limitReader{r: c.r, limit: limit}
		src = lr
	}
	dec := json.NewDecoder(src)
	for {
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if err == nil {
			// A value must end its line.
			var next [1]byte
			if n, rerr := dec.Buffered().Read(next[:]); n > 0 {
				if next[0] != '\n' && next[0] != '\r' {
					err = errors.New("invalid trailing data at the end of stream")
				}
			} else if rerr != nil && rerr != io.EOF {
				err = rerr
			}
		}
		select {
		case c.incoming <- lineOrErr{raw: raw, err: err}:
		case <-c.closed:
			return
		}
		if err != nil {
			return
		}
		if lr != nil {
			lr.n = 0
		}
	}
}

// limitReader fails a read once limit bytes were read for one message.
type limitReader struct {
	r        io.Reader
	limit, n int
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.n >= l.limit {
		return 0, errTooLarge
	}
	if len(p) > l.limit-l.n {
		p = p[:l.limit-l.n]
	}
	n, err := l.r.Read(p)
	l.n += n
	return n, err
}

// SessionID implements mcp.Connection: a stream has no session id.
func (c *streamConn) SessionID() string { return "" }

// Read implements mcp.Connection.
func (c *streamConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(c.queue) > 0 {
		m := c.queue[0]
		c.queue = c.queue[1:]
		return m, nil
	}
	var raw json.RawMessage
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.closed:
		return nil, io.EOF
	case l := <-c.incoming:
		if l.err != nil {
			return nil, l.err
		}
		raw = l.raw
	}
	if raw[0] == '[' {
		return c.readBatch(raw)
	}
	m, err := decodeMessage(raw)
	if err != nil {
		return nil, err
	}
	c.noteInitialize(m)
	return m, nil
}

// noteInitialize remembers the id of an initialize request, so that Write
// learns the negotiated protocol version from its answer.
func (c *streamConn) noteInitialize(m jsonrpc.Message) {
	if r, ok := m.(*jsonrpc.Request); ok && r.Method == "initialize" && r.ID.IsValid() {
		c.mu.Lock()
		c.initID = r.ID
		c.mu.Unlock()
	}
}

// readBatch starts a batch: it returns its first message and queues the
// others, as the SDK's connection does, and refuses a batch once the
// negotiated protocol version has none.
func (c *streamConn) readBatch(raw json.RawMessage) (jsonrpc.Message, error) {
	var raws []json.RawMessage
	if _, err := sjson.Parse(raw, &raws, sjson.DontMatchCaseInsensitiveStructFields); err != nil {
		return nil, fmt.Errorf("unmarshaling jsonrpc batch: %w", err)
	}
	if len(raws) == 0 {
		return nil, errors.New("empty batch")
	}
	msgs := make([]jsonrpc.Message, 0, len(raws))
	for _, r := range raws {
		m, err := jsonrpc.DecodeMessage(r)
		if err != nil {
			return nil, err
		}
		msgs = append(msgs, m)
		c.noteInitialize(m)
	}
	c.mu.Lock()
	protocol := c.protocol
	c.mu.Unlock()
	if protocol >= protocol20250618 {
		return nil, fmt.Errorf("JSON-RPC batching is not supported in %s and later (request version: %s)", protocol20250618, protocol)
	}
	var b *batch
	for _, m := range msgs {
		if req, ok := m.(*jsonrpc.Request); ok && req.ID.IsValid() {
			if b == nil {
				b = &batch{index: map[jsonrpc.ID]int{}}
			}
			if _, dup := b.index[req.ID]; dup {
				return nil, fmt.Errorf("duplicate message ID %q", req.ID)
			}
			b.index[req.ID] = len(b.answers)
			b.answers = append(b.answers, nil)
			b.pending++
		}
	}
	if b != nil {
		c.mu.Lock()
		for id := range b.index {
			if _, seen := c.batches[id]; seen {
				c.mu.Unlock()
				return nil, fmt.Errorf("%w: batch contains previously seen request %v", errInvalidRequest, id.Raw())
			}
		}
		if c.batches == nil {
			c.batches = map[jsonrpc.ID]*batch{}
		}
		for id := range b.index {
			c.batches[id] = b
		}
		c.mu.Unlock()
	}
	c.queue = msgs[1:]
	return msgs[0], nil
}

// errInvalidRequest is the SDK's invalid-request error (JSON-RPC -32600).
var errInvalidRequest = &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "invalid request"}

// wireMessage is the shape the SDK decodes a message into.
type wireMessage struct {
	VersionTag string          `json:"jsonrpc"`
	ID         any             `json:"id,omitempty"`
	Method     json.RawMessage `json:"method"`
	Params     json.RawMessage `json:"params,omitempty"`
	Result     json.RawMessage `json:"result,omitempty"`
	Error      *jsonrpc.Error  `json:"error,omitempty"`
}

// maxDepth is the deepest nesting of objects and arrays the SDK decodes.
const maxDepth = 1000

// decodeMessage is jsonrpc.DecodeMessage(raw), with one decoding instead of
// the SDK's two for a request, each of which allocates a 32 KiB buffer:
// the same decoder (segmentio's, field names matched exactly), the same
// checks. Whatever is not a well-formed request goes to
// jsonrpc.DecodeMessage, for its result and its error.
func decodeMessage(raw json.RawMessage) (jsonrpc.Message, error) {
	var w wireMessage
	if depth(raw) > maxDepth {
		return jsonrpc.DecodeMessage(raw)
	}
	if _, err := sjson.Parse(raw, &w, sjson.DontMatchCaseInsensitiveStructFields); err != nil || w.VersionTag != "2.0" || len(w.Method) == 0 {
		return jsonrpc.DecodeMessage(raw)
	}
	id, err := jsonrpc.MakeID(w.ID)
	if err != nil {
		return jsonrpc.DecodeMessage(raw)
	}
	var method string
	if _, err := sjson.Parse(w.Method, &method, sjson.DontMatchCaseInsensitiveStructFields); err != nil {
		return jsonrpc.DecodeMessage(raw)
	}
	return &jsonrpc.Request{ID: id, Method: method, Params: w.Params}, nil
}

// depth is the deepest nesting of objects and arrays in the JSON text b,
// which the reader has checked is one valid value.
func depth(b []byte) int {
	d, max, str, esc := 0, 0, false, false
	for _, c := range b {
		switch {
		case str && esc:
			esc = false
		case str && c == '\\':
			esc = true
		case str:
			str = c != '"'
		case c == '"':
			str = true
		case c == '{' || c == '[':
			if d++; d > max {
				max = d
			}
		case c == '}' || c == ']':
			d--
		}
	}
	return max
}

// Write implements mcp.Connection.
func (c *streamConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if r, ok := msg.(*jsonrpc.Response); ok {
		if r.ID == c.initID && r.ID.IsValid() {
			c.initialized(r)
		}
		if b, ok := c.batches[r.ID]; ok {
			return c.answerBatch(b, r)
		}
		if line, ok := appendResponse(c.out[:0], r); ok {
			c.out = line
			_, err := c.w.Write(line)
			return err
		}
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("marshaling message: %v", err)
	}
	_, err = c.w.Write(append(data, '\n'))
	return err
}

// initialized records the protocol version the answer to initialize
// negotiated (2025-03-26 when it names none, as the SDK does).
func (c *streamConn) initialized(r *jsonrpc.Response) {
	c.initID = jsonrpc.ID{}
	var res struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if r.Error != nil || json.Unmarshal(r.Result, &res) != nil {
		return
	}
	c.protocol = res.ProtocolVersion
	if c.protocol == "" {
		c.protocol = "2025-03-26"
	}
}

// answerBatch records r, an answer to a call of b, and writes b's answers
// once they are all there, as the SDK's connection does.
func (c *streamConn) answerBatch(b *batch, r *jsonrpc.Response) error {
	b.answers[b.index[r.ID]] = r
	delete(c.batches, r.ID)
	if b.pending--; b.pending > 0 {
		return nil
	}
	raws := make([]json.RawMessage, 0, len(b.answers))
	for _, a := range b.answers {
		raw, err := jsonrpc.EncodeMessage(a)
		if err != nil {
			return fmt.Errorf("encoding batch message: %w", err)
		}
		raws = append(raws, raw)
	}
	data, err := json.Marshal(raws)
	if err != nil {
		return err
	}
	_, err = c.w.Write(append(data, '\n'))
	return err
}

// appendResponse appends the line of a successful answer with an integer
// id to b: jsonrpc.EncodeMessage's bytes and a newline. EncodeMessage
// compacts the result (without HTML escaping), which changes nothing in a
// result the SDK's JSON-RPC layer encoded with encoding/json, as it encodes
// every result (jsonrpc2.NewResponse); appendResponse writes it as it is.
// It reports false for any other answer.
func appendResponse(b []byte, r *jsonrpc.Response) ([]byte, bool) {
	id, ok := r.ID.Raw().(int64)
	if !ok || r.Error != nil || len(r.Result) == 0 {
		return b, false
	}
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = strconv.AppendInt(b, id, 10)
	b = append(b, `,"result":`...)
	b = append(b, r.Result...)
	return append(b, "}\n"...), true
}

// Close implements mcp.Connection: it closes the stream and ends a Read
// that waits.
func (c *streamConn) Close() error {
	c.closeOnce.Do(func() {
		c.closeErr = errors.Join(c.r.Close(), c.w.Close())
		close(c.closed)
	})
	return c.closeErr
}
