package org.apache.flink.kubernetes.operator.api;

/** Compile-time mirror of the operator's {@code FlinkDeployment} CRD class: the name only. */
public class FlinkDeployment extends AbstractFlinkResource<Object, Object> {

    public FlinkDeployment() {}
}
