package findings

import (
	"fmt"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/rescale"
	"github.com/flinkpreflight/preflight/internal/units"
)

// vertexPayload is the restore part of one subtask's TaskDeploymentDescriptor, summed over
// the operators of the vertex's chain.
type vertexPayload struct {
	subtask                int
	bytes, inline, offsets int64
}

// vertexPayloads returns the payload of every new subtask of the vertex whose payload is at
// least min, largest first (ties by index). The bound check keeps the common case cheap.
func vertexPayloads(c *Context, v *rescale.VertexAssignment, minBytes int64) []vertexPayload {
	var bound int64
	for _, op := range v.Operators {
		bound += op.Summary.MaxPayloadBytes
	}
	if bound < minBytes || v.FullyFinished {
		return nil
	}
	var out []vertexPayload
	for i := 0; i < v.NewParallelism; i++ {
		c.stop.Check()
		p := vertexPayload{subtask: i}
		for _, op := range v.Operators {
			if op.Layout == nil || op.Path == rescale.PathNotRestored {
				continue
			}
			st := op.SubtaskTotals(i)
			p.bytes += st.PayloadBytes
			p.inline += st.InlineBytes
			p.offsets += st.Offsets
		}
		if p.bytes >= minBytes {
			out = append(out, p)
		}
	}
	return out
}

// unionPayloadFloor is the part of every subtask's payload that no parallelism removes: the
// offsets of all UNION elements (8 bytes each) and the inline streams that hold them, which
// every new subtask receives whole. It depends on the checkpoint only, so it is computed once
// per vertex and check (the safe-parallelism search asks for every candidate).
func unionPayloadFloor(c *Context, v *rescale.VertexAssignment) int64 {
	if f, ok := c.memo.unionFloors[v.ID]; ok {
		return f
	}
	f := computeUnionPayloadFloor(c, v)
	c.memo.unionFloors[v.ID] = f
	return f
}

func computeUnionPayloadFloor(c *Context, v *rescale.VertexAssignment) int64 {
	var floor int64
	for _, op := range v.Operators {
		if op.Layout == nil {
			continue
		}
		for i := range op.Layout.Subtasks {
			c.stop.Check()
			st := &op.Layout.Subtasks[i]
			for h := range st.OperatorStateHandles() {
				hasUnion := false
				for _, s := range h.States {
					if s.Mode == checkpoint.Union && s.Elements > 0 {
						floor += 8 * s.Elements
						hasUnion = true
					}
				}
				if hasUnion && h.Stream.Inline() {
					floor += h.Stream.Size
				}
			}
		}
	}
	return floor
}

// frameSize is PF120.
var frameSize = RuleMeta{
	ID:       "PF120",
	Title:    "Deployment of a subtask exceeds the RPC frame size",
	Severity: Error,
	Grading:  "WARNING above 80% of the frame size.",
	Cause: "The TaskDeploymentDescriptor carries the subtask's restore state inline: every inline " +
		"ByteStreamStateHandle byte and 8 bytes per operator-state offset it is assigned (only job and task " +
		"information can be offloaded to the BlobServer). Above pekko.framesize (akka.framesize, default 10 MiB) " +
		"the JobManager fails the submission with \"The rpc invocation size ... exceeds the maximum akka framesize.\" " +
		"UNION state is shipped whole to every subtask, so its share does not shrink with more parallelism.",
	Remedies: []Remedy{
		{When: "split", Text: "Raise pekko.framesize (akka.framesize before Flink 1.18) on the JobManager and TaskManagers above the payload, lower the state kept inline (execution.checkpointing.data-inline-threshold), or choose a parallelism that spreads SPLIT_DISTRIBUTE state thinner."},
		{When: "union", Text: "Shrink the UNION state before restoring: if it is orphaned legacy state, drop it (change the operator's uid and restore with --allowNonRestoredState, or remove it with the State Processor API). As a stop-gap raise pekko.framesize (akka.framesize before Flink 1.18) above the payload on the JobManager and TaskManagers."},
	},
	References: []string{"https://nightlies.apache.org/flink/flink-docs-stable/docs/deployment/config/#pekko-framesize", "FLINK-10122", "FLINK-21436"},
}

// jobManagerMemory is PF121.
var jobManagerMemory = RuleMeta{
	ID:       "PF121",
	Title:    "Restore assignment large against JobManager memory",
	Severity: Error,
	Grading:  "WARNING above half of the JobManager memory; silent when the memory is not given.",
	Cause: "The JobManager builds the restore assignment of every subtask (handles, offsets, inline bytes) and " +
		"serializes a TaskDeploymentDescriptor per subtask. UNION state multiplies by the parallelism; Paimon and " +
		"Kafka users reported JobManager heap OOMs from it. The rule compares the sum of all subtasks' payloads " +
		"with the configured JobManager memory.",
	Remedies:   []Remedy{{Text: "Reduce UNION state (each subtask receives all of it) or the parallelism of the vertex carrying it, or give the JobManager more heap (jobmanager.memory.heap.size)."}},
	References: []string{"https://github.com/apache/paimon/pull/1469", "FLINK-21436"},
}

func init() {
	register(&Rule{meta: &frameSize, check: checkFrameSize, safeAt: frameSizeSafeAt, unsafeEverywhere: frameSizeEverywhere})
	register(&Rule{meta: &jobManagerMemory, check: checkJobManagerMemory})
}

// checkFrameSize (PF120): a subtask's deployment would exceed the RPC frame size.
func checkFrameSize(c *Context) []Finding {
	frame := c.Options.frameSize()
	warnAt := frame / 10 * 8
	var out []Finding
	for _, v := range c.Result.Vertices {
		ps := vertexPayloads(c, v, warnAt)
		if len(ps) == 0 {
			continue
		}
		var over []int32
		var worst vertexPayload
		for _, p := range ps {
			if p.bytes > worst.bytes {
				worst = p
			}
			if p.bytes > frame {
				over = append(over, int32(p.subtask))
			}
		}
		sev := Warning
		var affected []int32
		if len(over) > 0 {
			sev, affected = Error, over
		} else {
			for _, p := range ps {
				affected = append(affected, int32(p.subtask))
			}
		}
		sortInt32(affected)
		op := failureOperator(c, rescale.Failure{}, v)
		f := c.finding(&frameSize, sev, op)
		f.VertexID = v.ID.String()
		f.AffectedSubtasks = affected
		floor := unionPayloadFloor(c, v)
		if sev == Error {
			f.Message = fmt.Sprintf("Deploying vertex %s at parallelism %d: the restore state of %s reaches %s per TaskDeploymentDescriptor (largest: subtask %d with %s inline and %s = %s of offsets), above the RPC frame size of %s. Flink fails the deployment with \"The rpc invocation size %d exceeds the maximum akka framesize.\"",
				v.Name, v.NewParallelism, subtasksText(affected), bytesText(worst.bytes), worst.subtask, bytesText(worst.inline), units.Plural(worst.offsets, "offset"), bytesText(8*worst.offsets), bytesText(frame), worst.bytes)
		} else {
			f.Message = fmt.Sprintf("Deploying vertex %s at parallelism %d: %s up to %s of restore state per TaskDeploymentDescriptor, more than 80%% of the RPC frame size of %s.",
				v.Name, v.NewParallelism, subtasksVerb(affected, "carry"), bytesText(worst.bytes), bytesText(frame))
		}
		if floor > 0 {
			f.Message += fmt.Sprintf(" UNION state alone accounts for %s per subtask at any parallelism.", bytesText(floor))
		}
		if floor > frame {
			f.Message += " No parallelism brings it under the frame size; even past deployment, every subtask's checkpoint acknowledgement would carry the same offsets again (\"declined\" with the same cause)."
			f.Remediation = frameSize.remedy("union")
		} else {
			f.Remediation = frameSize.remedy("split")
		}
		f.References = frameSize.refs()
		out = append(out, f)
	}
	return out
}

// checkJobManagerMemory (PF121): all deployment payloads together against the JobManager heap.
func checkJobManagerMemory(c *Context) []Finding {
	mem := c.Options.JobManagerMemory
	if mem <= 0 {
		return nil
	}
	p := c.jobPayloads()
	if p.total <= mem/2 || p.top < 0 {
		return nil
	}
	// A Session's range reports the finding only if it holds the vertex named.
	topV := c.searchIndex().vertexByHex(c, p.topID.String())
	if topV == nil {
		return nil
	}
	total, top := p.total, p.totals[p.top]
	sev := Warning
	if total > mem {
		sev = Error
	}
	f := c.finding(&jobManagerMemory, sev, failureOperator(c, rescale.Failure{}, topV))
	f.VertexID = topV.ID.String()
	f.Message = fmt.Sprintf("The restore assignment of all subtasks totals %s of deployment payload against %s of JobManager memory; vertex %s at parallelism %d contributes %s.",
		bytesText(total), bytesText(mem), topV.Name, topV.NewParallelism, bytesText(top))
	f.Remediation = jobManagerMemory.remedy("")
	f.References = jobManagerMemory.refs()
	return []Finding{f}
}
