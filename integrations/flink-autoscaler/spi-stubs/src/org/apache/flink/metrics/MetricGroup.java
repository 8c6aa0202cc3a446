package org.apache.flink.metrics;

/** Compile-only mirror of Flink's {@code MetricGroup} (flink-metrics-core); no method is mirrored. */
public interface MetricGroup {}
