package ops;

import java.util.ArrayList;
import java.util.List;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.OperatorStateStore;

/** The shape of PartitionTimeCommitTrigger: a helper registering state in its constructor from a
 * static descriptor, reading the first element when the caller says the job is restored. */
public class TriggerLike {
    private static final ListStateDescriptor<List<String>> PENDING_PARTITIONS_STATE_DESC =
            new ListStateDescriptor<>("pending-partitions", null);
    private final ListState<List<String>> pendingPartitionsState;
    private final List<String> pendingPartitions = new ArrayList<>();

    public TriggerLike(boolean isRestored, OperatorStateStore stateStore) throws Exception {
        this.pendingPartitionsState = stateStore.getListState(PENDING_PARTITIONS_STATE_DESC);
        if (isRestored) {
            pendingPartitions.addAll(pendingPartitionsState.get().iterator().next()); // decisive pending-partitions
        }
    }
}
