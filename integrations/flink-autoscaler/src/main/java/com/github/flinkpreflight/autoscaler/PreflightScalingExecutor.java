package com.github.flinkpreflight.autoscaler;

import org.apache.flink.api.common.JobID;
import org.apache.flink.autoscaler.ScalingExecutorPlugin;
import org.apache.flink.autoscaler.ScalingSummary;
import org.apache.flink.client.program.rest.RestClusterClient;
import org.apache.flink.runtime.jobgraph.JobVertexID;

import java.net.URI;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A FLIP-575 scaling executor that asks Flink Preflight whether the job's latest checkpoint can be
 * restored at the parallelism the autoscaler proposes, and applies the answer: APPROVE returns the
 * proposal unchanged, ADJUST returns it with the service's parallelism per vertex, VETO returns an
 * empty map (the operator then emits a {@code ScalingVetoed} event and does not scale).
 *
 * <p>The service discovers the checkpoint itself from Flink's REST API, given the job id and the
 * REST address taken from the plugin context. When no decision can be had (service unreachable,
 * timeout, HTTP error, unreadable answer, bad configuration), the {@code on-failure} option
 * decides: fail-closed vetoes, fail-open approves. The same option is sent to the service for the
 * case where it cannot read the checkpoint. {@link #apply} never throws: an exception would fail
 * the operator's whole scaling cycle.
 *
 * <p>One instance serves every job of the operator, possibly from several threads at once; all
 * state is per call except the shared, thread-safe HTTP clients.
 *
 * @param <KEY> the operator's job key
 */
public class PreflightScalingExecutor<KEY> implements ScalingExecutorPlugin<KEY> {

    private static final PluginLog LOG = PluginLog.forClass(PreflightScalingExecutor.class, "apply");

    private final DecideClient client = new DecideClient();

    /** Required by ServiceLoader. */
    public PreflightScalingExecutor() {}

    /**
     * Last in the chain, so that Preflight checks the parallelism the other plugins settled on
     * rather than one they change afterwards.
     */
    @Override
    public int priority() {
        return Integer.MAX_VALUE;
    }

    @Override
    public Map<JobVertexID, ScalingSummary> apply(
            Context<KEY> context, Map<JobVertexID, ScalingSummary> scalingSummaries) {
        if (scalingSummaries == null || scalingSummaries.isEmpty()) {
            return scalingSummaries;
        }
        AdapterConfig.FailurePolicy policy = AdapterConfig.FailurePolicy.FAIL_CLOSED;
        boolean dryRun = false;
        String job = "a job";
        try {
            Map<String, String> conf = context.getConfiguration().toMap();
            // Read leniently first, so that a configuration error is handled as the user asked.
            policy = AdapterConfig.failurePolicyOf(conf);
            dryRun = AdapterConfig.dryRunOf(conf);
            job = "job " + describeJob(context);
            AdapterConfig cfg;
            try {
                cfg = AdapterConfig.parse(conf);
            } catch (ConfigException e) {
                return onFailure(policy, dryRun, job, "configuration: " + e.getMessage(), scalingSummaries);
            }
            return decide(context, cfg, job, scalingSummaries);
        } catch (RuntimeException | LinkageError e) {
            // A bug here, or an operator whose SPI differs from the one this jar was built for
            // (NoSuchMethodError), must not fail the operator's scaling cycle.
            return onFailure(policy, dryRun, job, "unexpected " + e, scalingSummaries);
        }
    }

    private Map<JobVertexID, ScalingSummary> decide(
            Context<KEY> context,
            AdapterConfig cfg,
            String job,
            Map<JobVertexID, ScalingSummary> summaries) {
        JobID jobId = context.getJobID();
        if (jobId == null) {
            return onFailure(cfg.onFailure, cfg.dryRun, job, "the job has no job id yet", summaries);
        }
        String restUrl;
        try {
            restUrl = flinkRestUrl(context, cfg);
        } catch (Exception e) {
            return onFailure(
                    cfg.onFailure,
                    cfg.dryRun,
                    job,
                    "no Flink REST address (set '" + AdapterConfig.FLINK_REST_URL + "'): " + e.getMessage(),
                    summaries);
        }
        Map<String, Integer> proposed = new LinkedHashMap<>();
        summaries.forEach((v, s) -> proposed.put(hex(v), s.getNewParallelism()));
        String requestId = "autoscaler-" + jobId + "-" + Long.toHexString(ThreadLocalRandom.current().nextLong());

        Decision d;
        try {
            d = client.decide(cfg, new DecideClient.Request(restUrl, jobId.toString(), proposed), requestId);
        } catch (CallException e) {
            return onFailure(
                    cfg.onFailure, cfg.dryRun, job, e.getMessage() + " [request " + requestId + "]", summaries);
        }
        String where =
                job
                        + (d.checkpoint.isEmpty() ? "" : ", checkpoint " + d.checkpoint)
                        + (d.checkpointNote.isEmpty() ? "" : " (" + d.checkpointNote + ")")
                        + " [request " + requestId + "]";
        if (d.failed) {
            LOG.warn(
                    "Preflight could not check "
                            + where
                            + ": "
                            + d.failure
                            + "; the service applied "
                            + cfg.onFailure
                            + " and answered "
                            + d.action);
        }
        Map<JobVertexID, ScalingSummary> out;
        switch (d.action) {
            case APPROVE:
                out = summaries;
                break;
            case VETO:
                out = Collections.emptyMap();
                break;
            case ADJUST:
                try {
                    out = adjusted(summaries, d);
                } catch (IllegalStateException e) {
                    return onFailure(cfg.onFailure, cfg.dryRun, job, e.getMessage(), summaries);
                }
                break;
            default:
                return onFailure(
                        cfg.onFailure,
                        cfg.dryRun,
                        job,
                        "the service answered no action (DECISION_ACTION_UNSPECIFIED or newer)",
                        summaries);
        }
        report(d, where, proposed, out, cfg.dryRun);
        return cfg.dryRun ? summaries : out;
    }

    /**
     * The proposal with the service's parallelism per vertex. A vertex adjusted back to its
     * current parallelism is dropped from the map (the operator then keeps it as it is, and a
     * {@link ScalingSummary} cannot hold equal parallelisms); if that leaves nothing, nothing
     * scales.
     */
    static Map<JobVertexID, ScalingSummary> adjusted(
            Map<JobVertexID, ScalingSummary> summaries, Decision d) {
        Map<JobVertexID, ScalingSummary> out = new LinkedHashMap<>();
        for (Map.Entry<JobVertexID, ScalingSummary> e : summaries.entrySet()) {
            ScalingSummary s = e.getValue();
            Integer p = d.parallelism.get(hex(e.getKey()));
            if (p == null) {
                throw new IllegalStateException(
                        "the ADJUST answer has no parallelism for vertex " + hex(e.getKey()));
            }
            if (p < 1) {
                throw new IllegalStateException(
                        "the ADJUST answer gives vertex " + hex(e.getKey()) + " parallelism " + p);
            }
            if (p == s.getNewParallelism()) {
                out.put(e.getKey(), s);
            } else if (p != s.getCurrentParallelism()) {
                out.put(e.getKey(), new ScalingSummary(s.getCurrentParallelism(), p, s.getMetrics()));
            }
        }
        return out;
    }

    private static void report(
            Decision d,
            String where,
            Map<String, Integer> proposed,
            Map<JobVertexID, ScalingSummary> out,
            boolean dryRun) {
        StringBuilder sb = new StringBuilder();
        sb.append(dryRun ? "Preflight (dry run, not applied) " : "Preflight ")
                .append(d.action)
                .append(" for ")
                .append(where)
                .append(": proposed ")
                .append(proposed);
        if (d.action == Decision.Action.ADJUST) {
            Map<String, Integer> applied = new LinkedHashMap<>();
            out.forEach((v, s) -> applied.put(hex(v), s.getNewParallelism()));
            sb.append(", applying ").append(applied);
        }
        for (Decision.Vertex v : d.vertices) {
            sb.append("\n  ").append(v.describe());
        }
        if (d.action == Decision.Action.APPROVE && !d.failed) {
            LOG.info(sb.toString());
        } else {
            LOG.warn(sb.toString());
        }
    }

    private static Map<JobVertexID, ScalingSummary> onFailure(
            AdapterConfig.FailurePolicy policy,
            boolean dryRun,
            String job,
            String why,
            Map<JobVertexID, ScalingSummary> summaries) {
        boolean open = policy == AdapterConfig.FailurePolicy.FAIL_OPEN;
        LOG.warn(
                "Preflight gave no decision for "
                        + job
                        + ": "
                        + why
                        + "; "
                        + (open ? "fail-open: approving the proposal" : "fail-closed: vetoing the scaling")
                        + (dryRun && !open ? " (dry run: not applied)" : ""));
        return open || dryRun ? summaries : Collections.<JobVertexID, ScalingSummary>emptyMap();
    }

    /** The configured REST URL, else the one of the operator's REST client for this job. */
    private static String flinkRestUrl(Context<?> context, AdapterConfig cfg) throws Exception {
        if (cfg.flinkRestUrl != null) {
            return cfg.flinkRestUrl.toString();
        }
        try (RestClusterClient<String> rest = context.getRestClusterClient()) {
            String url = rest.getWebInterfaceURL();
            // RestClusterClient answers "Unknown address." when it cannot find the endpoint.
            URI u = Options.httpUri("REST client address", url == null ? "" : url.trim());
            return stripTrailingSlash(u.toString());
        }
    }

    private static String stripTrailingSlash(String s) {
        return s.endsWith("/") ? s.substring(0, s.length() - 1) : s;
    }

    private static String describeJob(Context<?> context) {
        Object key = context.getJobKey();
        JobID id = context.getJobID();
        return (key != null ? key + " " : "") + "(" + (id != null ? id : "no job id") + ")";
    }

    /** Flink prints vertex ids as lowercase hex; the service's map keys are compared that way. */
    static String hex(JobVertexID v) {
        return v.toString().toLowerCase(Locale.ROOT);
    }
}
