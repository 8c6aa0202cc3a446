package org.apache.flink.runtime.state;

import org.apache.flink.api.common.state.OperatorStateStore;

/** Test stand-in for Flink's FunctionInitializationContext. */
public interface FunctionInitializationContext {
    boolean isRestored();

    OperatorStateStore getOperatorStateStore();
}
