package ops;

import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;

/** Shared empty snapshotState for the test operators. */
abstract class Base implements CheckpointedFunction {
    @Override
    public void snapshotState(FunctionSnapshotContext context) throws Exception {}
}
