package ops;

import java.util.ArrayList;
import java.util.List;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.runtime.state.FunctionInitializationContext;

/** The shape of FlinkKafkaProducer's next-transactional-id-hint migration: the set of registered
 * state names (Strings) asked whether it contains a descriptor object, never true, so the
 * migration that would read every old element never runs and the old state is not read. */
public class DeadMigration extends Base {
    private static final ListStateDescriptor<String> OLD = new ListStateDescriptor<>("dead-old", String.class);
    private static final ListStateDescriptor<String> CURRENT = new ListStateDescriptor<>("dead-current", String.class);
    private final List<String> hints = new ArrayList<>();
    private transient ListState<String> current;

    @Override
    public void initializeState(FunctionInitializationContext context) throws Exception {
        current = context.getOperatorStateStore().getUnionListState(CURRENT);
        if (context.getOperatorStateStore().getRegisteredStateNames().contains(OLD)) {
            migrate(context);
        }
        // Near miss: asked for the name, the test may hold, so that migration is followed.
        if (context.getOperatorStateStore().getRegisteredStateNames().contains("live-old")) {
            migrateLive(context);
        }
        for (String h : current.get()) { // decisive dead-current
            hints.add(h);
        }
    }

    private void migrate(FunctionInitializationContext context) throws Exception {
        ListState<String> old = context.getOperatorStateStore().getUnionListState(OLD);
        List<String> copied = new ArrayList<>();
        old.get().forEach(copied::add);
        hints.addAll(copied);
    }

    private void migrateLive(FunctionInitializationContext context) throws Exception {
        ListState<String> old = context.getOperatorStateStore().getUnionListState(new ListStateDescriptor<>("live-old", String.class));
        for (String h : old.get()) { // decisive live-old
            hints.add(h);
        }
    }
}
