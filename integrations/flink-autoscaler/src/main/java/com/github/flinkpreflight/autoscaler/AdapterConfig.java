package com.github.flinkpreflight.autoscaler;

import java.net.URI;
import java.time.Duration;
import java.util.Map;

/**
 * The adapter's options, read per call from the plugin context's configuration, where the operator
 * puts {@code job.autoscaler.scaling.custom-executor.<name>.<key>} with the prefix stripped (so a
 * job can override them). Parsing is strict: a bad value is an error that names the key, and the
 * adapter then follows {@code on-failure}.
 */
final class AdapterConfig {

    static final String URL = "url";
    static final String ON_FAILURE = "on-failure";
    static final String CONNECT_TIMEOUT = "connect-timeout";
    static final String REQUEST_TIMEOUT = "request-timeout";
    static final String FLINK_REST_URL = "flink-rest-url";
    static final String FLINK_VERSION = "flink-version";
    static final String ALIGN_TO_KEY_GROUPS = "align-to-key-groups";
    static final String DRY_RUN = "dry-run";

    /** Where the operator records the FlinkDeployment's spec.flinkVersion, e.g. {@code v1_19}. */
    static final String OPERATOR_FLINK_VERSION = "$internal.flink.version";
    /** The RPC frame size of the job (Flink 1.18+ name, then the older one). */
    static final String[] FRAME_SIZE_KEYS = {"pekko.framesize", "akka.framesize"};

    static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(2);
    static final Duration DEFAULT_REQUEST_TIMEOUT = Duration.ofSeconds(30);

    /** What to do when no decision can be had: the service's FailurePolicy. */
    enum FailurePolicy {
        FAIL_CLOSED("FAILURE_POLICY_FAIL_CLOSED"),
        FAIL_OPEN("FAILURE_POLICY_FAIL_OPEN");

        final String protoName;

        FailurePolicy(String protoName) {
            this.protoName = protoName;
        }
    }

    final URI serviceUrl;
    final FailurePolicy onFailure;
    final Duration connectTimeout;
    final Duration requestTimeout;
    /** Null: ask the context's REST client. */
    final URI flinkRestUrl;
    /** Empty: unknown to the adapter (the service then assumes version-dependent bugs apply). */
    final String flinkVersion;
    /** 0: not configured. */
    final long rpcFrameSizeBytes;

    final boolean alignToKeyGroups;
    final boolean dryRun;

    private AdapterConfig(
            URI serviceUrl,
            FailurePolicy onFailure,
            Duration connectTimeout,
            Duration requestTimeout,
            URI flinkRestUrl,
            String flinkVersion,
            long rpcFrameSizeBytes,
            boolean alignToKeyGroups,
            boolean dryRun) {
        this.serviceUrl = serviceUrl;
        this.onFailure = onFailure;
        this.connectTimeout = connectTimeout;
        this.requestTimeout = requestTimeout;
        this.flinkRestUrl = flinkRestUrl;
        this.flinkVersion = flinkVersion;
        this.rpcFrameSizeBytes = rpcFrameSizeBytes;
        this.alignToKeyGroups = alignToKeyGroups;
        this.dryRun = dryRun;
    }

    /** The failure policy alone, read leniently (Options.failClosedLeniently). */
    static FailurePolicy failurePolicyOf(Map<String, String> conf) {
        return policy(Options.failClosedLeniently(ON_FAILURE, conf.get(ON_FAILURE), true));
    }

    /** The dry-run flag alone, read leniently: only a clear "true" is a dry run. */
    static boolean dryRunOf(Map<String, String> conf) {
        return "true".equalsIgnoreCase(Options.trimmed(conf.get(DRY_RUN)));
    }

    static AdapterConfig parse(Map<String, String> conf) throws ConfigException {
        String url = Options.trimmed(conf.get(URL));
        if (url.isEmpty()) {
            throw new ConfigException(
                    "'"
                            + URL
                            + "' is not set: give the preflightd HTTP address, e.g."
                            + " job.autoscaler.scaling.custom-executor.<name>.url:"
                            + " http://preflightd:8080");
        }
        String rest = Options.trimmed(conf.get(FLINK_REST_URL));
        String version = Options.trimmed(conf.get(FLINK_VERSION));
        if (version.isEmpty()) {
            version = operatorFlinkVersion(Options.trimmed(conf.get(OPERATOR_FLINK_VERSION)));
        }
        long frame = 0;
        for (String key : FRAME_SIZE_KEYS) {
            String v = Options.trimmed(conf.get(key));
            if (!v.isEmpty()) {
                frame = Options.parseMemorySize(key, v);
                break;
            }
        }
        return new AdapterConfig(
                Options.httpUri(URL, url),
                parsePolicy(conf.get(ON_FAILURE)),
                Options.positiveDuration(
                        CONNECT_TIMEOUT, conf.get(CONNECT_TIMEOUT), DEFAULT_CONNECT_TIMEOUT),
                Options.positiveDuration(
                        REQUEST_TIMEOUT, conf.get(REQUEST_TIMEOUT), DEFAULT_REQUEST_TIMEOUT),
                rest.isEmpty() ? null : Options.httpUri(FLINK_REST_URL, rest),
                version,
                frame,
                Options.parseBoolean(ALIGN_TO_KEY_GROUPS, conf.get(ALIGN_TO_KEY_GROUPS)),
                Options.parseBoolean(DRY_RUN, conf.get(DRY_RUN)));
    }

    static FailurePolicy parsePolicy(String v) throws ConfigException {
        return policy(Options.failClosed(ON_FAILURE, v, true));
    }

    private static FailurePolicy policy(boolean failClosed) {
        return failClosed ? FailurePolicy.FAIL_CLOSED : FailurePolicy.FAIL_OPEN;
    }

    /** {@code v1_19} (the operator's FlinkVersion enum name) to {@code 1.19}; else empty. */
    static String operatorFlinkVersion(String v) {
        if (v.matches("v\\d+_\\d+")) {
            return v.substring(1).replace('_', '.');
        }
        return "";
    }
}
