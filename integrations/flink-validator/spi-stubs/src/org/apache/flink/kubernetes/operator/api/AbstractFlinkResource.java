package org.apache.flink.kubernetes.operator.api;

/**
 * Compile-time mirror of the operator's {@code AbstractFlinkResource}: the name and the two type
 * parameters only (the real class is a fabric8 {@code CustomResource}; the plugin never touches
 * its members, it hands the object to the operator's own JSON mapper).
 */
public class AbstractFlinkResource<SPEC, STATUS> {

    public AbstractFlinkResource() {}
}
