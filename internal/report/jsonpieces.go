package report

import (
	"bytes"
	"errors"
	"slices"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// jsonChunk is how many operators, or states of one operator, are marshalled at a time: a
// report of hundreds of thousands of states is tens of MB of JSON at once, a chunk a small
// fraction of that (bench/README.md, "Smaller per-name records").
const jsonChunk = 4096

var errJSONPieces = errors.New("report: protojson's output of a piece is not as expected")

// writeReportJSON writes rep as protojson.Marshal would, indented, a piece at a time: the report
// with one empty operator standing for its list, then the operators a chunk at a time, an
// operator of many states with its states a chunk at a time. protojson writes a message the same
// whether nested or alone, and the indenter drops the whitespace it varies, so the bytes are
// those of the whole report marshalled at once (TestWriteJSONPieces).
func writeReportJSON(d *indenter, rep *pb.RescaleReport) error {
	segs, err := marshalAround(rep, "operators")
	if err != nil {
		return err
	}
	d.write(segs[0])
	ops := rep.GetOperators()
	first := true
	for len(ops) > 0 {
		if !first {
			d.write([]byte{','})
		}
		first = false
		if len(ops[0].GetStates()) > jsonChunk {
			if err := writeOperatorJSON(d, ops[0]); err != nil {
				return err
			}
			ops = ops[1:]
			continue
		}
		// Operators up to jsonChunk of them or states, stopping before one of many states.
		n, states := 0, 0
		for n < len(ops) && n < jsonChunk && len(ops[n].GetStates()) <= jsonChunk && states < jsonChunk {
			states += len(ops[n].GetStates())
			n++
		}
		if err := writeList(d, &pb.RescaleReport{Operators: ops[:n]}, `{"operators":[`); err != nil {
			return err
		}
		ops = ops[n:]
	}
	d.write(segs[1])
	return nil
}

// writeOperatorJSON writes one operator with its states a chunk at a time.
func writeOperatorJSON(d *indenter, op *pb.OperatorAssignment) error {
	segs, err := marshalAround(op, "states")
	if err != nil {
		return err
	}
	d.write(segs[0])
	states := op.GetStates()
	for k := 0; k < len(states); k += jsonChunk {
		if k > 0 {
			d.write([]byte{','})
		}
		if err := writeList(d, &pb.OperatorAssignment{States: states[k:min(k+jsonChunk, len(states))]}, `{"states":[`); err != nil {
			return err
		}
	}
	d.write(segs[1])
	return nil
}

// writeList writes the elements of the one list field m sets, without the brackets: m marshals
// as prefix, the elements, "]}".
func writeList(d *indenter, m proto.Message, prefix string) error {
	b, err := protojson.Marshal(m)
	if err != nil {
		return err
	}
	if !bytes.HasPrefix(b, []byte(prefix)) || !bytes.HasSuffix(b, []byte("]}")) {
		return errJSONPieces
	}
	d.write(b[len(prefix) : len(b)-2])
	return nil
}

// marshalAround marshals m with each of its list fields names (lists of messages, in field
// order) replaced by one empty element, and returns the segments around the lists' elements:
// what comes before the first list's elements (ending in '['), between one list's and the
// next's, and after the last's (starting with ']'). m's other fields are shared, not copied.
func marshalAround(m proto.Message, names ...protoreflect.Name) ([][]byte, error) {
	src := m.ProtoReflect()
	fields := make([]protoreflect.FieldDescriptor, len(names))
	for i, name := range names {
		fd := src.Descriptor().Fields().ByName(name)
		if fd == nil || !fd.IsList() || fd.Kind() != protoreflect.MessageKind {
			return nil, errJSONPieces
		}
		fields[i] = fd
	}
	shell := src.New()
	src.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if !slices.Contains(fields, fd) {
			shell.Set(fd, v)
		}
		return true
	})
	for _, fd := range fields {
		list := shell.Mutable(fd).List()
		list.Append(list.NewElement())
	}
	b, err := protojson.Marshal(shell.Interface())
	if err != nil {
		return nil, err
	}
	segs := make([][]byte, 0, len(fields)+1)
	at := 0
	for _, fd := range fields {
		marker := []byte(`"` + fd.JSONName() + `":[{}]`)
		i := bytes.Index(b, marker)
		if bytes.Count(b, marker) != 1 || i < at {
			return nil, errJSONPieces
		}
		segs = append(segs, b[at:i+len(marker)-3])
		at = i + len(marker) - 1
	}
	return append(segs, b[at:]), nil
}
