package org.apache.flink.api.common.state;

/** Test stand-in for Flink's ListStateDescriptor. */
public class ListStateDescriptor<T> {
    public ListStateDescriptor(String name, Class<T> type) {}
}
