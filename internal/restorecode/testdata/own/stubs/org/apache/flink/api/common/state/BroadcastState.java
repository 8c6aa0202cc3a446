package org.apache.flink.api.common.state;

import java.util.Map;

/** Test stand-in for Flink's BroadcastState. */
public interface BroadcastState<K, V> {
    Iterable<Map.Entry<K, V>> entries() throws Exception;

    V get(K key) throws Exception;

    void put(K key, V value) throws Exception;
}
