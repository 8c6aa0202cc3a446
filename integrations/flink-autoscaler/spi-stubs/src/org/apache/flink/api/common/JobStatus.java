package org.apache.flink.api.common;

/**
 * Compile-only mirror of Flink's {@code JobStatus} (flink-core): the constants; the terminal-state
 * bookkeeping is left out.
 */
public enum JobStatus {
    INITIALIZING,
    CREATED,
    RUNNING,
    FAILING,
    FAILED,
    CANCELLING,
    CANCELED,
    FINISHED,
    RESTARTING,
    SUSPENDED,
    RECONCILING
}
