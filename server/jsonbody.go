package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// jsonBodyMarshaler is the gateway's default JSON marshaler whose decoding errors say where the
// body is wrong: the field path ("plan.parallelism") and the byte offset, instead of protojson's
// "(line 1:184)" or encoding/json's bare "unexpected EOF".
type jsonBodyMarshaler struct{ runtime.JSONPb }

func newJSONBodyMarshaler() runtime.Marshaler {
	return &runtime.HTTPBodyMarshaler{Marshaler: &jsonBodyMarshaler{runtime.JSONPb{
		MarshalOptions:   protojson.MarshalOptions{EmitUnpopulated: true},
		UnmarshalOptions: protojson.UnmarshalOptions{DiscardUnknown: true},
	}}}
}

// NewDecoder reads one JSON value and decodes it, naming the field of a failure.
func (m *jsonBodyMarshaler) NewDecoder(r io.Reader) runtime.Decoder {
	return runtime.DecoderFunc(func(v any) error {
		var raw json.RawMessage
		if err := json.NewDecoder(r).Decode(&raw); err != nil {
			return malformedBody(err)
		}
		p, ok := v.(proto.Message)
		if !ok {
			return m.JSONPb.NewDecoder(bytes.NewReader(raw)).Decode(v)
		}
		if err := m.UnmarshalOptions.Unmarshal(raw, p); err != nil {
			return fieldError(raw, err)
		}
		return nil
	})
}

// malformedBody words a body that is not one complete JSON value.
func malformedBody(err error) error {
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		return fmt.Errorf("request body: malformed JSON at byte %d: %v", max(se.Offset-1, 0), err) // Offset counts the bytes read, the bad one included
	case errors.Is(err, io.EOF):
		return errors.New("request body: empty, want a JSON object")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return errors.New("request body: the JSON ends before it is complete")
	}
	return fmt.Errorf("request body: %v", err)
}

var protojsonPosition = regexp.MustCompile(`\(line (\d+):(\d+)\)`)

// fieldError rewrites protojson's error with the field path at the position it names.
func fieldError(raw []byte, err error) error {
	msg := err.Error()
	m := protojsonPosition.FindStringSubmatchIndex(msg)
	if m == nil {
		return fmt.Errorf("request body: %s", strings.TrimPrefix(msg, "proto: "))
	}
	line, _ := strconv.Atoi(msg[m[2]:m[3]])
	col, _ := strconv.Atoi(msg[m[4]:m[5]])
	off := offsetOf(raw, line, col)
	detail := strings.TrimSpace(strings.TrimPrefix(msg[m[1]:], ":"))
	path := jsonPathAt(raw, off)
	out := fmt.Sprintf("request body: field %s (byte %d): %s", path, off, detail)
	if hint := fieldHints[path]; hint != "" {
		out += "; " + hint
	}
	return errors.New(out)
}

// fieldHints explains fields whose name invites a wrong guess.
var fieldHints = map[string]string{
	"plan.parallelism":       `plan.parallelism is the deprecated name of plan.vertexParallelism, per vertex {"KEY": P}; the job-wide parallelism (the CLI's --parallelism, the upload's parallelism=) is plan.defaultParallelism`,
	"plan.vertexParallelism": `plan.vertexParallelism is per vertex, {"KEY": P}; the job-wide parallelism (the CLI's --parallelism, the upload's parallelism=) is plan.defaultParallelism`,
}

// offsetOf turns protojson's 1-based line and column into a byte offset of raw.
func offsetOf(raw []byte, line, col int) int {
	off := 0
	for l := 1; l < line; l++ {
		i := bytes.IndexByte(raw[off:], '\n')
		if i < 0 {
			break
		}
		off += i + 1
	}
	return min(off+col-1, len(raw))
}

// jsonPathAt returns the path (a.b[2].c) of the innermost value of a JSON document that ends
// after byte off: the value protojson's error position points into. "" for the top level.
func jsonPathAt(raw []byte, off int) string {
	type frame struct {
		object    bool
		key       string // object: the current member
		index     int    // array: the current element
		expectKey bool   // object: the next string is a member name
	}
	var stack []frame
	path := func() string {
		var b strings.Builder
		for _, f := range stack {
			switch {
			case f.object && f.key != "":
				if b.Len() > 0 {
					b.WriteByte('.')
				}
				b.WriteString(f.key)
			case !f.object && f.index >= 0:
				fmt.Fprintf(&b, "[%d]", f.index)
			}
		}
		return b.String()
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	for {
		tok, err := dec.Token()
		if err != nil {
			return path()
		}
		var top *frame
		if len(stack) > 0 {
			top = &stack[len(stack)-1]
		}
		closing := tok == json.Delim('}') || tok == json.Delim(']')
		if s, ok := tok.(string); ok && top != nil && top.expectKey {
			top.key, top.expectKey = s, false
			continue
		}
		if top != nil && !top.object && !closing {
			top.index++ // a value of the array begins
		}
		if int(dec.InputOffset()) > off && !closing {
			return path()
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, frame{object: true, expectKey: true})
		case json.Delim('['):
			stack = append(stack, frame{index: -1})
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			if len(stack) > 0 && stack[len(stack)-1].object {
				stack[len(stack)-1].expectKey = true
			}
		default:
			if top != nil && top.object {
				top.expectKey = true
			}
		}
	}
}
