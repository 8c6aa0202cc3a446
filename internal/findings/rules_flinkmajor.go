package findings

import (
	"fmt"
	"strings"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
)

// flinkMajorUpgrade is PF117.
var flinkMajorUpgrade = RuleMeta{
	ID:       "PF117",
	Title:    "Flink 1.x checkpoint restored by Flink 2.x",
	Severity: Error,
	Grading: "ERROR when the checkpoint holds state of an operator Flink 2.0 removed (FlinkKafkaProducer, FlinkKafkaConsumer: " +
		"SinkFunction/SourceFunction-era state names); WARNING otherwise.",
	Cause: "A _metadata file of format 4 or lower was written by Flink 1.x (format 5 is Flink 2.0's, FLINK-36001). Flink 2.0 " +
		"upgraded Kryo from 2.24 to 5.6 (FLIP-317, FLINK-3154) and serializes Java collections with new built-in serializers " +
		"(FLINK-34037); its release notes say \"State Compatibility is not guaranteed between 1.x and 2.x\", and the Kryo " +
		"upgrade tests against 1.x state are disabled for that reason (FLINK-37660, FLINK-37661). Flink 2.0 also removed " +
		"SourceFunction/SinkFunction and with them FlinkKafkaProducer and FlinkKafkaConsumer: their state (`state`, " +
		"`next-transactional-id-hint-v2`, the Kryo-serialized `next-transactional-id-hint`, `topic-partition-offset-states`) has " +
		"no reader in 2.x, so the restore needs --allowNonRestoredState and the legacy producer's pending transactions are lost.",
	Remedies: []Remedy{
		{When: "legacy", Text: "On Flink 1.20, replace the removed operators (FlinkKafkaProducer by KafkaSink, FlinkKafkaConsumer by " +
			"KafkaSource) under new uids, stop with a savepoint after their transactions are committed, and restore that savepoint " +
			"on Flink 2.x with --allowNonRestoredState; keep the 1.x savepoint for rollback."},
		{Text: "Test the restore on a copy of the savepoint with the Flink 2.x cluster before the upgrade, and keep the 1.x " +
			"savepoint for rollback. Remove Kryo from state first where you can (register TypeInformation, POJO or Avro " +
			"serializers and migrate via a savepoint on 1.20, or rewrite the state with the State Processor API)."},
	},
	References: []string{"https://nightlies.apache.org/flink/flink-docs-release-2.0/release-notes/flink-2.0/",
		"https://issues.apache.org/jira/browse/FLINK-3154", "https://issues.apache.org/jira/browse/FLINK-34037",
		"https://issues.apache.org/jira/browse/FLINK-37660", "https://issues.apache.org/jira/browse/FLINK-36001"},
}

func init() { register(&Rule{meta: &flinkMajorUpgrade, check: checkFlinkMajorUpgrade, jobWide: true}) }

// removedOperatorStates are operator state names of operators that Flink 2.0 removed, with the
// operator's name for messages.
var removedOperatorStates = map[string]string{
	"next-transactional-id-hint-v2": "FlinkKafkaProducer",
	"next-transactional-id-hint":    "FlinkKafkaProducer",
	"topic-partition-offset-states": "FlinkKafkaConsumer",
}

// checkFlinkMajorUpgrade (PF117): a checkpoint written by Flink 1.x (format ≤ 4) restored by
// Flink 2.x.
func checkFlinkMajorUpgrade(c *Context) []Finding {
	if c.Layout == nil || c.Layout.Version < 2 || c.Layout.Version > 4 || c.Options.FlinkVersion == "" {
		return nil
	}
	v, err := ParseVersion(c.Options.FlinkVersion)
	if err != nil || v.Major < 2 {
		return nil
	}
	legacy := legacyOperators(c)
	intro := fmt.Sprintf("This format-%d _metadata file was written by Flink 1.x and you restore it with Flink %s. Flink 2.0 "+
		"upgraded Kryo 2 to 5 and replaced Kryo for Java collections; its release notes say state compatibility between 1.x "+
		"and 2.x is not guaranteed (FLINK-3154, FLINK-34037, FLINK-37660): Kryo-serialized state may fail to restore.",
		c.Layout.Version, c.Options.FlinkVersion)
	if len(legacy) == 0 {
		f := c.finding(&flinkMajorUpgrade, Warning, nil)
		f.Message = intro
		f.Remediation = flinkMajorUpgrade.remedy("")
		f.References = flinkMajorUpgrade.refs()
		return []Finding{f}
	}
	f := c.finding(&flinkMajorUpgrade, Error, nil)
	f.Message = intro + " It also holds state of operators Flink 2.0 removed, which no 2.x operator reads: " +
		strings.Join(legacy, "; ") + "."
	f.Remediation = flinkMajorUpgrade.remedy("legacy")
	f.References = flinkMajorUpgrade.refs()
	return []Finding{f}
}

// legacyOperators describes the first few checkpoint operators holding state of an operator
// Flink 2.0 removed, counting the rest.
func legacyOperators(c *Context) []string {
	out, _ := firstOperators(c, func(ol *checkpoint.OperatorLayout) (string, bool) {
		for _, name := range layoutStateNames(ol) {
			if what, ok := removedOperatorStates[name]; ok {
				return fmt.Sprintf("%s (%s state `%s`)", layoutOpLabel(c, ol), what, name), true
			}
		}
		return "", false
	})
	return out
}

// layoutStateNames returns the distinct operator state names of a checkpoint operator, in the
// order first seen.
func layoutStateNames(ol *checkpoint.OperatorLayout) []string {
	var names []string
	seen := map[string]bool{}
	for j := range ol.Subtasks {
		for s := range ol.Subtasks[j].OperatorStates() {
			if !seen[s.Name] {
				seen[s.Name] = true
				names = append(names, s.Name)
			}
		}
	}
	return names
}

// layoutOpLabel names a checkpoint operator in messages: as the new job names it when it is in
// the simulation, else by the name and uid the file records (format 5+) and its ID.
func layoutOpLabel(c *Context, ol *checkpoint.OperatorLayout) string {
	if c.Result != nil {
		if op := c.Result.Operator(ol.ID); op != nil && (op.Name != "" || op.UID != "") {
			return opLabel(op, nil)
		}
	}
	switch {
	case ol.UID != "":
		return "operator uid " + ol.UID + " (ID " + ol.ID.String() + ")"
	case ol.Name != "":
		return "operator \"" + ol.Name + "\" (ID " + ol.ID.String() + ")"
	}
	return "operator " + ol.ID.String()
}
