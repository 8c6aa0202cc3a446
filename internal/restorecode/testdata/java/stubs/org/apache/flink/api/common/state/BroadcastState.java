// Stub of Apache Flink's API for compiling the restore-analysis fixtures: only the members the
// fixtures use, with the real packages, names and erased signatures. Not Flink's source.

package org.apache.flink.api.common.state;

import java.util.Iterator;
import java.util.Map;

public interface BroadcastState<K, V> extends ReadOnlyBroadcastState<K, V> {
    void put(K key, V value) throws Exception;

    void remove(K key) throws Exception;

    Iterator<Map.Entry<K, V>> iterator() throws Exception;

    Iterable<Map.Entry<K, V>> entries() throws Exception;
}
