package org.apache.flink.api.common.functions;

import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;

/** Test stand-in for Flink's RuntimeContext: its getListState is keyed state. */
public interface RuntimeContext {
    <T> ListState<T> getListState(ListStateDescriptor<T> d);
}
