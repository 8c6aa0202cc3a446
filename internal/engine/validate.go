package engine

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/findings"
	"github.com/flinkpreflight/preflight/internal/rescale"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// MaxParallelismBound is Flink's upper bound for parallelism and max parallelism
// (KeyGroupRangeAssignment.UPPER_BOUND_MAX_PARALLELISM = 1 << 15).
const MaxParallelismBound = rescale.UpperBoundMaxParallelism

// OptionsError is a check option outside what Preflight accepts (a malformed Flink version, a
// negative size, an unknown enum value); callers map it to INVALID_ARGUMENT / exit 2.
type OptionsError struct {
	Field string // the option, as in the API: "flink_version", "rpc_frame_size_bytes"
	Value string
	Msg   string
}

func (e *OptionsError) Error() string {
	return fmt.Sprintf("invalid check option %s %q: %s", e.Field, e.Value, e.Msg)
}

// ValidateRequest checks a plan and its options against the bounds Flink itself enforces, before
// anything is decoded or simulated: every parallelism and max parallelism within
// 1..MaxParallelismBound (default_parallelism may be 0: keep the stored one), enum values the API
// defines, sizes not negative, and a Flink version that parses. The CLI calls it on its flags and
// the engine on every request, so the CLI and the server refuse the same inputs. The error is a
// *PlanError or an *OptionsError. It also merges the plan's deprecated `parallelism` into
// `vertex_parallelism` (mergeDeprecatedParallelism), so everything after it reads one field.
func ValidateRequest(p *pb.RescalePlan, opts *pb.CheckOptions) error {
	if err := mergeDeprecatedParallelism(p); err != nil {
		return err
	}
	if err := validatePlan(p); err != nil {
		return err
	}
	return validateOptions(opts)
}

// ValidateParallelism checks one parallelism value at full width, before any narrowing to the
// API's int32: the CLI parses flags as int64 and calls it, so 4294967299 is refused instead of
// wrapping to 3. field names the flag or plan field in the error.
func ValidateParallelism(field, key string, p int64, zeroKeeps bool) error {
	lo := int64(1)
	if zeroKeeps {
		lo = 0
	}
	if p >= lo && p <= MaxParallelismBound {
		return nil
	}
	msg := fmt.Sprintf("parallelism %d is outside 1..%d (Flink's upper bound, KeyGroupRangeAssignment.UPPER_BOUND_MAX_PARALLELISM)", p, MaxParallelismBound)
	if zeroKeeps {
		msg = fmt.Sprintf("parallelism %d is outside 1..%d (Flink's upper bound, KeyGroupRangeAssignment.UPPER_BOUND_MAX_PARALLELISM; 0 keeps the stored parallelism)", p, MaxParallelismBound)
	}
	if key == "" {
		key = fmt.Sprint(p)
	}
	return &PlanError{Field: field, Key: key, Msg: msg}
}

// ValidateMaxParallelism is ValidateParallelism for a max parallelism.
func ValidateMaxParallelism(field, key string, p int64) error {
	if p >= 1 && p <= MaxParallelismBound {
		return nil
	}
	return &PlanError{Field: field, Key: key,
		Msg: fmt.Sprintf("max parallelism %d is outside 1..%d (Flink's upper bound, KeyGroupRangeAssignment.UPPER_BOUND_MAX_PARALLELISM)", p, MaxParallelismBound)}
}

// mergeDeprecatedParallelism moves the entries of the plan's deprecated `parallelism` (the
// older name of the per-vertex map) into `vertex_parallelism`. A key in both must agree.
func mergeDeprecatedParallelism(p *pb.RescalePlan) error {
	old := p.GetParallelism()
	if len(old) == 0 {
		return nil
	}
	for _, k := range sortedKeys(old) {
		if v, both := p.GetVertexParallelism()[k]; both && v != old[k] {
			return &PlanError{Field: "parallelism", Key: k, Msg: fmt.Sprintf(
				"is %d in parallelism (the deprecated name) and %d in vertex_parallelism", old[k], v)}
		}
	}
	if p.VertexParallelism == nil {
		p.VertexParallelism = make(map[string]int32, len(old))
	}
	for k, v := range old {
		p.VertexParallelism[k] = v
	}
	//lint:ignore SA1019 cleared once merged
	p.Parallelism = nil
	return nil
}

func validatePlan(p *pb.RescalePlan) error {
	if err := ValidateParallelism("default_parallelism", "", int64(p.GetDefaultParallelism()), true); err != nil {
		return err
	}
	for _, k := range sortedKeys(p.GetVertexParallelism()) {
		if err := ValidateParallelism("vertex_parallelism", k, int64(p.GetVertexParallelism()[k]), false); err != nil {
			return err
		}
	}
	for _, k := range sortedKeys(p.GetMaxParallelism()) {
		if err := ValidateMaxParallelism("max_parallelism", k, int64(p.GetMaxParallelism()[k].GetValue())); err != nil {
			return err
		}
	}
	for _, field := range []string{"input_channel_mappers", "output_channel_mappers"} {
		m := p.GetInputChannelMappers()
		if field == "output_channel_mappers" {
			m = p.GetOutputChannelMappers()
		}
		for _, k := range sortedKeys(m) {
			if _, known := pb.SubtaskMapper_name[int32(m[k])]; !known {
				return &PlanError{Field: field, Key: k, Msg: fmt.Sprintf("unknown subtask mapper %d", int32(m[k]))}
			}
		}
	}
	return nil
}

func validateOptions(o *pb.CheckOptions) error {
	if v := o.GetFlinkVersion(); v != "" {
		if _, err := findings.ParseFlinkVersion(v); err != nil {
			return &OptionsError{Field: "flink_version", Value: v, Msg: err.Error()}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(o.GetConnectorVersions())) {
		arg := name + "=" + o.GetConnectorVersions()[name]
		if _, _, err := findings.ParseConnectorVersion(arg); err != nil {
			return &OptionsError{Field: "connector_versions", Value: arg, Msg: err.Error()}
		}
	}
	for _, s := range []struct {
		field string
		v     int64
	}{
		{"rpc_frame_size_bytes", o.GetRpcFrameSizeBytes()},
		{"inline_state_threshold_bytes", o.GetInlineStateThresholdBytes()},
		{"jobmanager_memory_bytes", o.GetJobmanagerMemoryBytes()},
	} {
		if s.v < 0 {
			return &OptionsError{Field: s.field, Value: fmt.Sprint(s.v), Msg: "a size cannot be negative (0 means the default)"}
		}
	}
	if o.GetRestoreMode() != "" && RestoreMode(o.GetRestoreMode()) == "" {
		return &OptionsError{Field: "restore_mode", Value: o.GetRestoreMode(), Msg: "unknown restore mode (want claim, no-claim or legacy)"}
	}
	if o.GetKafkaTransactionTimeoutMs() < 0 {
		return &OptionsError{Field: "kafka_transaction_timeout_ms", Value: fmt.Sprint(o.GetKafkaTransactionTimeoutMs()), Msg: "a timeout cannot be negative (0 means the default, one hour)"}
	}
	if t := o.GetSnapshotTime(); t != "" {
		if _, err := time.Parse(time.RFC3339, t); err != nil {
			return &OptionsError{Field: "snapshot_time", Value: t, Msg: "not an RFC 3339 time, e.g. 2026-12-05T06:00:00Z"}
		}
	}
	if err := validateSubtaskOperators(o.GetSubtaskOperators()); err != nil {
		return err
	}
	if _, known := pb.Severity_name[int32(o.GetFailLevel())]; !known {
		return &OptionsError{Field: "fail_level", Value: fmt.Sprint(int32(o.GetFailLevel())), Msg: "unknown severity (want INFO, WARNING or ERROR)"}
	}
	return nil
}

// MaxSubtaskOperators is the most operators CheckOptions.subtask_operators may name: each costs a
// report row per new subtask, so the list is for picking a few charts, not every operator.
const MaxSubtaskOperators = 64

func validateSubtaskOperators(ids []string) error {
	if len(ids) > MaxSubtaskOperators {
		return &OptionsError{Field: "subtask_operators", Value: fmt.Sprint(len(ids), " IDs"), Msg: fmt.Sprintf("at most %d operators (include_subtasks lists every operator's subtasks)", MaxSubtaskOperators)}
	}
	for _, id := range ids {
		if _, err := checkpoint.ParseOperatorID(id); err != nil {
			return &OptionsError{Field: "subtask_operators", Value: id, Msg: "not an operator ID (32 hex digits, as the report's operator_id)"}
		}
	}
	return nil
}

// RestoreMode normalizes a restore mode as the API and the CLI accept it ("CLAIM", "no_claim",
// "No-Claim", ...) to findings.RestoreClaim, RestoreNoClaim or RestoreLegacy; "" when s is none.
func RestoreMode(s string) string {
	switch m := strings.ReplaceAll(strings.ToLower(strings.TrimSpace(s)), "_", "-"); m {
	case findings.RestoreClaim, findings.RestoreNoClaim, findings.RestoreLegacy:
		return m
	case "noclaim":
		return findings.RestoreNoClaim
	}
	return ""
}

// sortedKeys returns m's keys in order, so that the first error reported does not depend on map
// order.
func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
