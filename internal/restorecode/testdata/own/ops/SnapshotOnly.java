package ops;

import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;

/** Near-miss: the state is read only in snapshotState. */
public class SnapshotOnly implements org.apache.flink.streaming.api.checkpoint.CheckpointedFunction {
    private ListState<Long> state;
    private long count;

    @Override
    public void initializeState(FunctionInitializationContext context) throws Exception {
        state = context.getOperatorStateStore().getListState(new ListStateDescriptor<>("snapshot-only", Long.class));
    }

    @Override
    public void snapshotState(FunctionSnapshotContext context) throws Exception {
        Long first = state.get().iterator().next();
        state.clear();
        state.add(first + count);
    }
}
