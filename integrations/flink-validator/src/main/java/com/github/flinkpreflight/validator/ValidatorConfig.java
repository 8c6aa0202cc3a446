package com.github.flinkpreflight.validator;

import java.net.URI;
import java.time.Duration;
import java.util.Map;

/**
 * The validator's options, read once from the operator's configuration (its {@code config.yaml} /
 * {@code flink-conf.yaml}, which the operator hands to every validator plugin through
 * {@code Plugin.configure}) under {@link #PREFIX}. Parsing is strict: a bad value is an error
 * that names the key, and the validator then follows {@code on-failure} on every call.
 */
final class ValidatorConfig {

    static final String PREFIX = "preflight.validator.";
    static final String URL = "url";
    static final String ON_FAILURE = "on-failure";
    static final String CONNECT_TIMEOUT = "connect-timeout";
    static final String REQUEST_TIMEOUT = "request-timeout";
    static final String DRY_RUN = "dry-run";

    static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(2);
    /** Below the API server's 10 s wait for the operator's webhook, above preflightd's 5 s. */
    static final Duration DEFAULT_REQUEST_TIMEOUT = Duration.ofSeconds(8);

    final URI serviceUrl;
    /** Deny (true) or allow (false) a change that could not be checked. */
    final boolean failClosed;
    final Duration connectTimeout;
    final Duration requestTimeout;
    final boolean dryRun;

    private ValidatorConfig(
            URI serviceUrl,
            boolean failClosed,
            Duration connectTimeout,
            Duration requestTimeout,
            boolean dryRun) {
        this.serviceUrl = serviceUrl;
        this.failClosed = failClosed;
        this.connectTimeout = connectTimeout;
        this.requestTimeout = requestTimeout;
        this.dryRun = dryRun;
    }

    /** The failure policy alone, read leniently (Options.failClosedLeniently). */
    static boolean failClosedOf(Map<String, String> conf) {
        return Options.failClosedLeniently(PREFIX + ON_FAILURE, conf.get(PREFIX + ON_FAILURE), false);
    }

    static ValidatorConfig parse(Map<String, String> conf) throws ConfigException {
        String url = Options.trimmed(conf.get(PREFIX + URL));
        if (url.isEmpty()) {
            throw new ConfigException(
                    "'" + PREFIX + URL + "' is not set: give the preflightd HTTP address, e.g. "
                            + PREFIX + URL + ": http://preflightd.preflight:8080");
        }
        return new ValidatorConfig(
                Options.httpUri(PREFIX + URL, url),
                parsePolicy(conf.get(PREFIX + ON_FAILURE)),
                Options.positiveDuration(
                        PREFIX + CONNECT_TIMEOUT,
                        conf.get(PREFIX + CONNECT_TIMEOUT),
                        DEFAULT_CONNECT_TIMEOUT),
                Options.positiveDuration(
                        PREFIX + REQUEST_TIMEOUT,
                        conf.get(PREFIX + REQUEST_TIMEOUT),
                        DEFAULT_REQUEST_TIMEOUT),
                Options.parseBoolean(PREFIX + DRY_RUN, conf.get(PREFIX + DRY_RUN)));
    }

    /** fail-open (the default, as preflightd's --admission-failure-policy) or fail-closed. */
    static boolean parsePolicy(String v) throws ConfigException {
        return Options.failClosed(PREFIX + ON_FAILURE, v, false);
    }
}
