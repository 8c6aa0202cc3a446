package org.apache.flink.streaming.api.operators;

import org.apache.flink.runtime.state.StateInitializationContext;

/** Test stand-in for Flink's AbstractStreamOperator. */
public abstract class AbstractStreamOperator<OUT> {
    public void initializeState(StateInitializationContext context) throws Exception {}

    protected int getIndexOfThisSubtask() {
        return 0;
    }

    protected int getNumberOfParallelSubtasks() {
        return 1;
    }
}
