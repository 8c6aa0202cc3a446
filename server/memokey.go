package server

import (
	"encoding/hex"

	"google.golang.org/protobuf/proto"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// Canonical plans for the result key. A plan's per-vertex maps (parallelism, max_parallelism,
// the channel mappers) may name an operator by its hex ID (any case), its uid or its name, and
// these are the same question when they name the same operator. canonicalPlan rewrites every
// key to the lowercase hex ID of the checkpoint operator it names, so that such questions share
// one memoized answer, but only where that is provably the same question for the engine:
//
//   - the plan declares no vertices (chains) and no new-job operators: then every checkpoint
//     operator is a vertex of its own, and the engine resolves a key to the operators it names
//     as internal/rescale's resolver.checkpointMatches does: a hex ID that the checkpoint holds;
//     otherwise the uid hash, uids and names (format 5+) of the checkpoint's operators. A key
//     naming exactly one operator X then sets exactly X's vertex, as X's hex ID does;
//   - every key of every map names exactly one operator, and no two keys of one map name the
//     same one. Otherwise the engine may answer with an error (no such operator, ambiguous,
//     contradicting keys) that quotes the key as written, so the plan is left as it is.
//
// The report itself does not quote plan keys (the engine reports vertices by the checkpoint's
// IDs, names and uids), which TestCanonicalPlanSameAnswer checks against the engine. The check
// options are not canonicalized: flink_version is quoted as written in findings' messages, so
// "1.19" and "1.19.0" are different answers.
//
// Resolution reads the layout, so it happens against the cached layout of the file version the
// key names; it scans the operators (no index is kept per layout), which is why layouts with more
// than maxCanonicalOperators operators keep their plans as written.

// maxCanonicalOperators bounds the operators canonicalPlan scans per key.
const maxCanonicalOperators = 4096

// canonicalPlan returns plan with its operator keys written canonically for layout l, or plan
// itself when it has nothing to rewrite or the rewrite is not provably the same question.
func canonicalPlan(l *checkpoint.Layout, plan *pb.RescalePlan) *pb.RescalePlan {
	if l == nil || len(plan.GetVertices()) > 0 || len(plan.GetNewJobOperators()) > 0 {
		return plan
	}
	if canonicalKeys(plan.GetParallelism()) && canonicalKeys(plan.GetMaxParallelism()) &&
		canonicalKeys(plan.GetInputChannelMappers()) && canonicalKeys(plan.GetOutputChannelMappers()) {
		return plan // nothing to rewrite
	}
	if len(l.Operators) > maxCanonicalOperators {
		return plan
	}
	par, ok1 := rewriteKeys(l, plan.GetParallelism())
	maxPar, ok2 := rewriteKeys(l, plan.GetMaxParallelism())
	in, ok3 := rewriteKeys(l, plan.GetInputChannelMappers())
	out, ok4 := rewriteKeys(l, plan.GetOutputChannelMappers())
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return plan
	}
	c := proto.Clone(plan).(*pb.RescalePlan)
	c.Parallelism, c.MaxParallelism, c.InputChannelMappers, c.OutputChannelMappers = par, maxPar, in, out
	return c
}

// canonicalKeys reports whether every key of m is already a lowercase hex operator ID.
func canonicalKeys[V any](m map[string]V) bool {
	for k := range m {
		if !isCanonicalID(k) {
			return false
		}
	}
	return true
}

func isCanonicalID(k string) bool {
	if len(k) != 32 {
		return false
	}
	for i := 0; i < len(k); i++ {
		if c := k[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// rewriteKeys returns m with every key replaced by the canonical ID of the one operator it names;
// false when a key names none or several, or two keys name the same operator. A nil or empty m
// stays nil.
func rewriteKeys[V any](l *checkpoint.Layout, m map[string]V) (map[string]V, bool) {
	if len(m) == 0 {
		return nil, true
	}
	out := make(map[string]V, len(m))
	for k, v := range m {
		id, ok := resolveOperatorKey(l, k)
		if !ok {
			return nil, false
		}
		s := hex.EncodeToString(id[:])
		if _, dup := out[s]; dup {
			return nil, false
		}
		out[s] = v
	}
	return out, true
}

// resolveOperatorKey is the one checkpoint operator a plan key names, as the engine's resolver
// matches keys when the plan declares no operators of its own (see the comment above).
func resolveOperatorKey(l *checkpoint.Layout, key string) (checkpoint.OperatorID, bool) {
	has := func(id checkpoint.OperatorID) bool {
		for i := range l.Operators {
			if l.Operators[i].ID == id {
				return true
			}
		}
		return false
	}
	if id, err := checkpoint.ParseOperatorID(key); err == nil {
		return id, has(id)
	}
	var found checkpoint.OperatorID
	n := 0
	add := func(id checkpoint.OperatorID) {
		if n == 0 || id != found {
			found = id
			n++
		}
	}
	if id := checkpoint.OperatorIDFromUID(key); has(id) {
		add(id)
	}
	for i := range l.Operators {
		if op := &l.Operators[i]; op.UID != "" && op.UID == key || op.Name != "" && op.Name == key {
			add(op.ID)
		}
	}
	return found, n == 1
}
