package org.apache.flink.api.common.state;

/** Test stand-in for Flink's MapStateDescriptor. */
public class MapStateDescriptor<K, V> {
    public MapStateDescriptor(String name, Class<K> k, Class<V> v) {}
}
