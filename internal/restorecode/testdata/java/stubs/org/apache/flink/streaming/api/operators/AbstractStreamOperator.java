// Stub of Apache Flink's API for compiling the restore-analysis fixtures: only the members the
// fixtures use, with the real packages, names and erased signatures. Not Flink's source.

package org.apache.flink.streaming.api.operators;

import org.apache.flink.runtime.state.StateInitializationContext;
import org.apache.flink.runtime.state.StateSnapshotContext;

import java.io.Serializable;

public abstract class AbstractStreamOperator<OUT> implements Serializable {
    public void initializeState(StateInitializationContext context) throws Exception {}

    public void snapshotState(StateSnapshotContext context) throws Exception {}

    public void open() throws Exception {}

    public void notifyCheckpointComplete(long checkpointId) throws Exception {}
}
