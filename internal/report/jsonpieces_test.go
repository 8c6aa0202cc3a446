package report

import (
	"bytes"
	"strconv"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// TestIndenterPieces: the indenter fed a document in pieces of any size writes what it writes
// for the document at once.
func TestIndenterPieces(t *testing.T) {
	compact, err := protojson.Marshal(sampleReport())
	if err != nil {
		t.Fatal(err)
	}
	for _, src := range append(indentSeeds, string(compact)) {
		var whole bytes.Buffer
		if err := indentJSON(&whole, []byte(src)); err != nil {
			t.Fatal(err)
		}
		for _, size := range []int{1, 2, 3, 7, 64} {
			var got bytes.Buffer
			d := newIndenter(&got)
			for k := 0; k < len(src); k += size {
				d.write([]byte(src[k:min(k+size, len(src))]))
			}
			if err := d.finish(); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), whole.Bytes()) {
				t.Fatalf("pieces of %d bytes of %q:\n%s\nwant\n%s", size, src, got.String(), whole.String())
			}
		}
	}
}

// TestWriteJSONPieces: WriteJSON marshals a report in pieces (operators and states a chunk at a
// time); the bytes must be those of the whole report marshalled at once.
func TestWriteJSONPieces(t *testing.T) {
	ops := func(n, states int, name string) []*pb.OperatorAssignment {
		out := make([]*pb.OperatorAssignment, n)
		for i := range out {
			op := &pb.OperatorAssignment{OperatorId: strconv.Itoa(i), Name: name, NewParallelism: 4}
			for k := range states {
				op.States = append(op.States, &pb.StateAssignment{Name: name + strconv.Itoa(k), Mode: "SPLIT_DISTRIBUTE", Elements: int64(k)})
			}
			out[i] = op
		}
		return out
	}
	tricky := `"operators":[{}] "states":[{}] \"]}`
	cases := map[string][]*pb.OperatorAssignment{
		"one":                {{OperatorId: "a"}},
		"many operators":     ops(3*jsonChunk+5, 0, "op"),
		"many small":         ops(jsonChunk/2+3, 3, "s"),
		"one of many states": ops(1, 2*jsonChunk+1, "split-"),
		"exactly a chunk":    ops(2, jsonChunk, "x"),
		"tricky names":       ops(3, jsonChunk+2, tricky),
		"mixed": append(append(ops(5, 1, "a"), ops(1, jsonChunk+1, "b")...),
			append(ops(jsonChunk+1, 0, "c"), ops(1, 3*jsonChunk, tricky)...)...),
	}
	for name, list := range cases {
		t.Run(name, func(t *testing.T) {
			rep := proto.Clone(sampleReport()).(*pb.RescaleReport)
			rep.Operators = list
			rep.Findings = append(rep.Findings, &pb.Finding{RuleId: "PF170", Message: tricky, StateNames: []string{tricky}})
			compact, err := protojson.Marshal(rep)
			if err != nil {
				t.Fatal(err)
			}
			var want, got bytes.Buffer
			if err := indentJSON(&want, compact); err != nil {
				t.Fatal(err)
			}
			if err := WriteJSON(&got, rep); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want.Bytes()) {
				t.Fatalf("pieces differ from the whole (%d against %d bytes)", got.Len(), want.Len())
			}
		})
	}
}
