package engine

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/flinkpreflight/preflight/internal/findings"
	"github.com/flinkpreflight/preflight/internal/rescale"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// The Go enums of findings and rescale cross the API by number (pb.Severity(f.Severity),
// pb.Verdict(rep.Verdict), findings.Severity(opts.GetFailLevel()), rescale.SubtaskMapper(v)).
// This test pins that coupling by name, from both sides: every proto value is the Go value with
// the same number and name, and every Go value that has a name has its proto value. A value
// added, removed or reordered on either side fails here.
func TestEnumsMatchProto(t *testing.T) {
	for _, tc := range []struct {
		enum   protoreflect.EnumDescriptor
		prefix string
		// goName is the Go value's name for number n; known is false for a number the Go enum
		// does not define.
		goName func(n int32) (name string, known bool)
	}{
		{pb.Severity(0).Descriptor(), "SEVERITY_", func(n int32) (string, bool) {
			s := findings.Severity(n).String()
			return s, n == 0 || s != "UNSPECIFIED"
		}},
		{pb.Verdict(0).Descriptor(), "VERDICT_", func(n int32) (string, bool) {
			s := findings.Verdict(n).String()
			return s, n == 0 || s != "UNSPECIFIED"
		}},
		{pb.SubtaskMapper(0).Descriptor(), "SUBTASK_MAPPER_", func(n int32) (string, bool) {
			if n < 0 || n > 255 {
				return "", false
			}
			s := rescale.SubtaskMapper(n).String()
			return s, !strings.HasPrefix(s, "SubtaskMapper(")
		}},
	} {
		t.Run(string(tc.enum.Name()), func(t *testing.T) {
			values := tc.enum.Values()
			if values.Len() < 2 {
				t.Fatalf("%d proto values", values.Len())
			}
			for i := 0; i < values.Len(); i++ {
				v := values.Get(i)
				want := strings.TrimPrefix(string(v.Name()), tc.prefix)
				if got, known := tc.goName(int32(v.Number())); !known || got != want {
					t.Errorf("proto %s = %d: Go value %d is %q (defined: %v), want %q", v.Name(), v.Number(), v.Number(), got, known, want)
				}
			}
			// The Go enums are small; 256 covers every uint8 and far more than any int enum here.
			for n := int32(0); n < 256; n++ {
				if name, known := tc.goName(n); known && values.ByNumber(protoreflect.EnumNumber(n)) == nil {
					t.Errorf("Go value %d (%s) has no proto value", n, name)
				}
			}
		})
	}
}

// ParseSeverity reads the proto's names (without the prefix), as the CLI's --fail-on does.
func TestParseSeverityMatchesProto(t *testing.T) {
	values := pb.Severity(0).Descriptor().Values()
	for i := 0; i < values.Len(); i++ {
		v := values.Get(i)
		if v.Number() == 0 {
			continue
		}
		name := strings.TrimPrefix(string(v.Name()), "SEVERITY_")
		s, err := findings.ParseSeverity(strings.ToLower(name))
		if err != nil || int32(s) != int32(v.Number()) {
			t.Errorf("ParseSeverity(%q) = %d, %v; want %d", strings.ToLower(name), s, err, v.Number())
		}
	}
}
