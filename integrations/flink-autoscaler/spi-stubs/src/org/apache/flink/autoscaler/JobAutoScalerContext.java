package org.apache.flink.autoscaler;

import org.apache.flink.annotation.Experimental;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.client.program.rest.RestClusterClient;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.util.function.SupplierWithException;

/**
 * Compile-only mirror of flink-autoscaler's {@code JobAutoScalerContext} (operator main branch,
 * FLINK-39959). Mirrors the public constructor (the one Lombok's builder uses), the protected copy
 * constructor plugin contexts use, and the getters the adapter calls. Left out because the adapter
 * does not use them: the builder, {@code ScalingCycleState} and the per-cycle accessors
 * ({@code getJobTopology()}, {@code getEvaluatedMetrics()}, ...), TaskManager resource getters.
 *
 * @param <KEY> The job key.
 */
@Experimental
public class JobAutoScalerContext<KEY> {

    private final KEY jobKey;
    private final JobID jobID;
    private final JobStatus jobStatus;
    private final Configuration configuration;
    private final MetricGroup metricGroup;
    private final SupplierWithException<RestClusterClient<String>, Exception> restClientSupplier;

    public JobAutoScalerContext(
            KEY jobKey,
            JobID jobID,
            JobStatus jobStatus,
            Configuration configuration,
            MetricGroup metricGroup,
            SupplierWithException<RestClusterClient<String>, Exception> restClientSupplier) {
        this.jobKey = jobKey;
        this.jobID = jobID;
        this.jobStatus = jobStatus;
        this.configuration = configuration;
        this.metricGroup = metricGroup;
        this.restClientSupplier = restClientSupplier;
    }

    /**
     * Copies the context and overlays {@code overrides} on its configuration (the real class calls
     * {@code AutoScalerOptions.overlayConfiguration}; overriding keys win).
     */
    protected JobAutoScalerContext(
            JobAutoScalerContext<KEY> autoScalerContext, Configuration overrides) {
        this.jobKey = autoScalerContext.jobKey;
        this.jobID = autoScalerContext.jobID;
        this.jobStatus = autoScalerContext.jobStatus;
        Configuration merged = new Configuration(autoScalerContext.configuration);
        merged.addAll(overrides);
        this.configuration = merged;
        this.metricGroup = autoScalerContext.metricGroup;
        this.restClientSupplier = autoScalerContext.restClientSupplier;
    }

    public KEY getJobKey() {
        return jobKey;
    }

    /** Null when the job has not started. */
    public JobID getJobID() {
        return jobID;
    }

    /** Null when the job has not started. */
    public JobStatus getJobStatus() {
        return jobStatus;
    }

    public Configuration getConfiguration() {
        return configuration;
    }

    public MetricGroup getMetricGroup() {
        return metricGroup;
    }

    /** A new client per call in the operator: callers close it. */
    public RestClusterClient<String> getRestClusterClient() throws Exception {
        return restClientSupplier.get();
    }
}
