package org.apache.flink.autoscaler;

import org.apache.flink.annotation.Experimental;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.jobgraph.JobVertexID;

import java.util.Map;

/**
 * Compile-only mirror of the FLIP-575 SPI, flink-kubernetes-operator main branch
 * (flink-autoscaler/src/main/java/org/apache/flink/autoscaler/ScalingExecutorPlugin.java as of
 * FLINK-39959, 2026-07-07). Same package, type parameters, method signatures and nested Context
 * constructor; javadoc shortened.
 *
 * <p>The operator chains the selected plugins by ascending {@link #priority()}; each gets the
 * previous plugin's output. Returning the input approves, a modified map adjusts, an empty map
 * vetoes (the operator then emits a {@code ScalingVetoed} event). Implementations are discovered
 * with {@link java.util.ServiceLoader} through
 * {@code META-INF/services/org.apache.flink.autoscaler.ScalingExecutorPlugin}.
 *
 * @param <KEY> The job key.
 */
@Experimental
public interface ScalingExecutorPlugin<KEY> {

    /** Lower values run first; the default is 0. */
    default int priority() {
        return 0;
    }

    /**
     * @param context the job's autoscaler context with this plugin's prefix-stripped options
     *     merged into {@code getConfiguration()}
     * @param scalingSummaries only the vertices whose parallelism changes
     * @return the (possibly modified) summaries, or an empty map to veto
     */
    Map<JobVertexID, ScalingSummary> apply(
            Context<KEY> context, Map<JobVertexID, ScalingSummary> scalingSummaries);

    /**
     * The plugin context: the job's {@link JobAutoScalerContext} whose configuration has the
     * plugin's {@code job.autoscaler.scaling.custom-executor.<name>.<parameter>} options, prefix
     * stripped, merged on top.
     *
     * @param <KEY> The job key.
     */
    class Context<KEY> extends JobAutoScalerContext<KEY> {

        public Context(JobAutoScalerContext<KEY> autoScalerContext, Configuration overrides) {
            super(autoScalerContext, overrides);
        }
    }
}
