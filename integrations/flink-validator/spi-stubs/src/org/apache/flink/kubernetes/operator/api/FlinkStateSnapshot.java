package org.apache.flink.kubernetes.operator.api;

/** Compile-time mirror of the operator's {@code FlinkStateSnapshot} CRD class: the name only. */
public class FlinkStateSnapshot {

    public FlinkStateSnapshot() {}
}
