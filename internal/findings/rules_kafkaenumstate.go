package findings

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

	"github.com/flinkpreflight/preflight/internal/rescale"
)

// kafkaEnumState is PF192.
var kafkaEnumState = RuleMeta{
	ID:       "PF192",
	Title:    "Kafka source enumerator state written by a newer flink-connector-kafka than the restoring one",
	Severity: Error,
	Grading: "WARNING when neither the operator's name nor its uid says Kafka (another FLIP-27 source may use other " +
		"serializer versions). Silent without --connector-version flink-connector-kafka=VERSION.",
	Cause: "A FLIP-27 source's coordinator state starts with the source coordinator's serde version and the split " +
		"enumerator's serializer version (SourceCoordinator, both i32). KafkaSourceEnumStateSerializer writes version 1 " +
		"in Flink 1.13-1.17 and flink-connector-kafka 3.0.x (FLINK-21817), version 2 from connector 3.1.0 to 4.0.x (FLINK-32019: " +
		"assignment status per partition), and version 3 from 5.0.0 (FLINK-38453: full splits with offsets). A connector " +
		"cannot read a newer version: the JobManager fails the restore with IOException \"The bytes are serialized with " +
		"version 3, while this deserializer only supports version up to 2\", and the job restarts in a loop. The serde " +
		"and enumerator versions are the first eight bytes of the coordinator state in _metadata.",
	Remedies: []Remedy{{Text: "Restore with flink-connector-kafka %[1]s or later, or from a snapshot taken before the connector " +
		"upgrade. Enumerator state cannot be downgraded; as a last resort give the source a new uid and restore with " +
		"--allowNonRestoredState, so it starts from the committed group offsets (records may be read twice or skipped).",
		Args: []string{"the first connector version that reads the state"}}},
	References: []string{"https://issues.apache.org/jira/browse/FLINK-38453", "https://issues.apache.org/jira/browse/FLINK-32019",
		"https://issues.apache.org/jira/browse/FLINK-21817",
		"https://github.com/apache/flink-connector-kafka/blob/main/flink-connector-kafka/src/main/java/org/apache/flink/connector/kafka/source/enumerator/KafkaSourceEnumStateSerializer.java"},
}

func init() { register(&Rule{meta: &kafkaEnumState, check: checkKafkaEnumState}) }

// kafkaConnector is the component name of flink-connector-kafka in Options.ConnectorVersions.
const kafkaConnector = "flink-connector-kafka"

// kafkaEnumVersions are the KafkaSourceEnumStateSerializer versions by the first connector
// release that writes them (version 0: Flink 1.12's built-in connector). The flink-connector-kafka
// version of Flink's built-in connector (up to 1.17) is Flink's own.
var kafkaEnumVersions = []struct {
	version int32
	since   Version
}{
	{0, MustParseVersion("1.12.0")},
	{1, MustParseVersion("1.13.0")},
	{2, MustParseVersion("3.1.0")},
	{3, MustParseVersion("5.0.0")},
}

// kafkaEnumReadable returns the newest enumerator state version connector release v reads.
func kafkaEnumReadable(v Version) int32 {
	v.Qualifier = "" // "3.1.0-1.18" is the 3.1.0 release built for Flink 1.18
	readable := int32(-1)
	for _, e := range kafkaEnumVersions {
		if v.Compare(e.since) >= 0 {
			readable = e.version
		}
	}
	return readable
}

// checkKafkaEnumState (PF192): a Kafka source's enumerator state written by a serializer version
// the restoring flink-connector-kafka cannot read.
func checkKafkaEnumState(c *Context) []Finding {
	given := c.Options.componentVersion(kafkaConnector)
	if given == "" {
		return nil
	}
	v, err := ParseVersion(given)
	if err != nil {
		return nil
	}
	readable := kafkaEnumReadable(v)
	var out []Finding
	c.operators(func(_ *rescale.VertexAssignment, op *rescale.OperatorAssignment) {
		cs := op.Layout.CoordinatorState
		if cs == nil || len(cs.Prefix()) < 8 || !isSourceOperator(c, op) {
			return
		}
		p := cs.Prefix()
		serde, enum := int32(binary.BigEndian.Uint32(p)), int32(binary.BigEndian.Uint32(p[4:]))
		// Only versions a Kafka enumerator writes: anything else is another source's state.
		if serde < 0 || serde > 1 || enum <= readable || enum > kafkaEnumVersions[len(kafkaEnumVersions)-1].version {
			return
		}
		out = append(out, kafkaEnumStateFinding(c, op, given, readable, enum))
	})
	return out
}

// kafkaEnumStateFinding is PF192's finding for one source whose enumerator state version enum exceeds what
// connector version given reads.
func kafkaEnumStateFinding(c *Context, op *rescale.OperatorAssignment, given string, readable, enum int32) Finding {
	since := kafkaEnumVersions[enum].since.String()
	sev, which := Warning, "If this source is a KafkaSource, its"
	if strings.Contains(strings.ToLower(op.Name+" "+op.UID+" "+op.Layout.Name+" "+op.Layout.UID), "kafka") {
		sev, which = Error, "Its"
	}
	f := c.finding(&kafkaEnumState, sev, op)
	f.Message = fmt.Sprintf("The coordinator state of %s holds split enumerator state of serializer version %d, which "+
		"flink-connector-kafka writes since %s. %s enumerator state cannot be read by flink-connector-kafka %s, which reads "+
		"versions up to %d: the restore fails with IOException \"The bytes are serialized with version %d, while this "+
		"deserializer only supports version up to %d\" (FLINK-38453 introduced version 3 in 5.0.0, FLINK-32019 version 2 in "+
		"3.1.0).", opLabel(op, c.Entry(op)), enum, since, which, given, readable, enum, readable)
	f.Remediation = kafkaEnumState.remedy("", since)
	f.References = kafkaEnumState.refs()
	return f
}

// isSourceOperator reports whether op is a FLIP-27 source: the catalog identifies it so, or its
// state holds SourceReaderState.
func isSourceOperator(c *Context, op *rescale.OperatorAssignment) bool {
	if e := c.Entry(op); e != nil && e.ID == "source-operator" {
		return true
	}
	return slices.Contains(layoutStateNames(op.Layout), "SourceReaderState")
}
