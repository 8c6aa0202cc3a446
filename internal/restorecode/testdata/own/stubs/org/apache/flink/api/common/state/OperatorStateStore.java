package org.apache.flink.api.common.state;

/** Test stand-in for Flink's OperatorStateStore. */
public interface OperatorStateStore {
    <S> ListState<S> getListState(ListStateDescriptor<S> d) throws Exception;

    <S> ListState<S> getUnionListState(ListStateDescriptor<S> d) throws Exception;

    <K, V> BroadcastState<K, V> getBroadcastState(MapStateDescriptor<K, V> d) throws Exception;

    java.util.Set<String> getRegisteredStateNames();
}
