package org.apache.flink.kubernetes.operator.api;

/** Compile-time mirror of the operator's {@code FlinkSessionJob} CRD class: the name only. */
public class FlinkSessionJob extends AbstractFlinkResource<Object, Object> {

    public FlinkSessionJob() {}
}
