// Stub of Apache Flink's API for compiling the restore-analysis fixtures: only the members the
// fixtures use, with the real packages, names and erased signatures. Not Flink's source.

package org.apache.flink.api.common.state;

import java.util.Set;

public interface OperatorStateStore {
    <K, V> BroadcastState<K, V> getBroadcastState(MapStateDescriptor<K, V> stateDescriptor)
            throws Exception;

    <S> ListState<S> getListState(ListStateDescriptor<S> stateDescriptor) throws Exception;

    <S> ListState<S> getUnionListState(ListStateDescriptor<S> stateDescriptor) throws Exception;

    Set<String> getRegisteredStateNames();

    Set<String> getRegisteredBroadcastStateNames();
}
