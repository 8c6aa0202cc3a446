package com.github.flinkpreflight.autoscaler;

import com.github.flinkpreflight.testing.FakeService.Seen;

import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.autoscaler.JobAutoScalerContext;
import org.apache.flink.autoscaler.ScalingExecutorPlugin;
import org.apache.flink.autoscaler.ScalingSummary;
import org.apache.flink.autoscaler.metrics.EvaluatedScalingMetric;
import org.apache.flink.autoscaler.metrics.ScalingMetric;
import org.apache.flink.client.program.rest.RestClusterClient;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.jobgraph.JobVertexID;

import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/** Flink-side fixtures for the adapter's tests (runner, assertions and fakes: ../testing). */
final class TestSupport {

    private TestSupport() {}

    // ---------------------------------------------------------------------------------------
    // Flink-side fixtures

    static JobVertexID vertex(String hex) {
        return JobVertexID.fromHexString(hex);
    }

    static Map<ScalingMetric, EvaluatedScalingMetric> metrics(double tpr) {
        Map<ScalingMetric, EvaluatedScalingMetric> m = new EnumMap<>(ScalingMetric.class);
        m.put(ScalingMetric.TRUE_PROCESSING_RATE, EvaluatedScalingMetric.avg(tpr));
        return m;
    }

    /** Summaries in the given order: vertex hex, current, new, alternating. */
    static Map<JobVertexID, ScalingSummary> summaries(Object... hexCurrentNew) {
        Map<JobVertexID, ScalingSummary> m = new LinkedHashMap<>();
        for (int i = 0; i < hexCurrentNew.length; i += 3) {
            int cur = (Integer) hexCurrentNew[i + 1];
            int nw = (Integer) hexCurrentNew[i + 2];
            m.put(vertex((String) hexCurrentNew[i]), new ScalingSummary(cur, nw, metrics(100.0 * (i + 1))));
        }
        return m;
    }

    /** A REST client whose address is fixed and whose close() is counted. */
    static final class FakeRestClient extends RestClusterClient<String> {
        final String url;
        final AtomicInteger closed;

        FakeRestClient(String url, AtomicInteger closed) throws Exception {
            super(new Configuration(), "test-cluster");
            this.url = url;
            this.closed = closed;
        }

        @Override
        public String getWebInterfaceURL() {
            return url;
        }

        @Override
        public void close() {
            closed.incrementAndGet();
        }
    }

    /** What a plugin context needs, set up the way the operator does it. */
    static final class Ctx {
        String key = "flink-ns/my-job";
        JobID jobId = JobID.fromHexString("0123456789abcdef0123456789abcdef");
        String restUrl = "http://my-job-rest.flink-ns:8081";
        final Map<String, String> jobConf = new LinkedHashMap<>();
        final Map<String, String> pluginConf = new LinkedHashMap<>();
        final AtomicInteger restClientsOpened = new AtomicInteger();
        final AtomicInteger restClientsClosed = new AtomicInteger();

        Ctx plugin(String k, String v) {
            pluginConf.put(k, v);
            return this;
        }

        Ctx job(String k, String v) {
            jobConf.put(k, v);
            return this;
        }

        ScalingExecutorPlugin.Context<String> build() {
            JobAutoScalerContext<String> base =
                    new JobAutoScalerContext<>(
                            key,
                            jobId,
                            JobStatus.RUNNING,
                            Configuration.fromMap(jobConf),
                            null,
                            () -> {
                                restClientsOpened.incrementAndGet();
                                return new FakeRestClient(restUrl, restClientsClosed);
                            });
            return new ScalingExecutorPlugin.Context<>(base, Configuration.fromMap(pluginConf));
        }
    }

    /** The JSON body of a request the fake service saw. */
    @SuppressWarnings("unchecked")
    static Map<String, Object> json(Seen s) throws Json.ParseException {
        return (Map<String, Object>) Json.parse(s.body);
    }
}
