// Stub of Apache Flink's API for compiling the restore-analysis fixtures: only the members the
// fixtures use, with the real packages, names and erased signatures. Not Flink's source.

package org.apache.flink.api.common.state;

import java.util.Map;

public interface ReadOnlyBroadcastState<K, V> extends State {
    V get(K key) throws Exception;

    boolean contains(K key) throws Exception;

    Iterable<Map.Entry<K, V>> immutableEntries() throws Exception;
}
