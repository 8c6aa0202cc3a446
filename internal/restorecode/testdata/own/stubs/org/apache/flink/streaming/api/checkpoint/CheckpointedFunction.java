package org.apache.flink.streaming.api.checkpoint;

import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;

/** Test stand-in for Flink's CheckpointedFunction. */
public interface CheckpointedFunction {
    void snapshotState(FunctionSnapshotContext context) throws Exception;

    void initializeState(FunctionInitializationContext context) throws Exception;
}
