package ops;

import java.util.ArrayList;
import java.util.List;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.util.Preconditions;

/** The shape of ContinuousFileMonitoringFunction: all elements into a list, then at most one. */
public class MonitoringLike extends Base {
    private ListState<Long> checkpointedState;
    private long globalModificationTime = Long.MIN_VALUE;

    @Override
    public void initializeState(FunctionInitializationContext context) throws Exception {
        this.checkpointedState = context.getOperatorStateStore().getListState(new ListStateDescriptor<>("file-monitoring-state", Long.class));
        if (context.isRestored()) {
            List<Long> retrievedStates = new ArrayList<>();
            for (Long entry : this.checkpointedState.get()) {
                retrievedStates.add(entry);
            }
            Preconditions.checkArgument(retrievedStates.size() <= 1, "invalid state"); // decisive file-monitoring-state
            if (retrievedStates.size() == 1) {
                this.globalModificationTime = retrievedStates.get(0);
            }
        }
    }
}
