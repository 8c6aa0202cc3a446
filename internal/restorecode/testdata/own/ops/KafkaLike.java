package ops;

import java.util.TreeMap;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.OperatorStateStore;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.runtime.state.FunctionInitializationContext;

/** The shape of FlinkKafkaConsumerBase: all union elements into a map, picked per subtask later. */
public class KafkaLike extends Base {
    private static final String OFFSETS_STATE_NAME = "topic-partition-offset-states";
    private transient ListState<Tuple2<String, Long>> unionOffsetStates;
    private transient TreeMap<String, Long> restoredState;

    @Override
    @SuppressWarnings("unchecked")
    public final void initializeState(FunctionInitializationContext context) throws Exception {
        OperatorStateStore stateStore = context.getOperatorStateStore();
        this.unionOffsetStates =
                stateStore.getUnionListState(
                        new ListStateDescriptor<>(OFFSETS_STATE_NAME, (Class<Tuple2<String, Long>>) (Class<?>) Tuple2.class));
        if (context.isRestored()) {
            restoredState = new TreeMap<>();
            for (Tuple2<String, Long> kafkaOffset : unionOffsetStates.get()) { // decisive topic-partition-offset-states
                restoredState.put(kafkaOffset.f0, kafkaOffset.f1);
            }
        }
    }
}
