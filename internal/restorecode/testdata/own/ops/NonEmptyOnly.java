package ops;

import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.shaded.guava31.com.google.common.collect.Iterables;

/** getOnlyElement where the elements are known not to be empty (Iceberg's TriggerManagerOperator:
 * `if (!Iterables.isEmpty(s.get())) x = Iterables.getOnlyElement(s.get())`) can only fail on
 * several: AT-MOST-ONE. Near miss: without the test it is EXACTLY-ONE. */
public class NonEmptyOnly extends Base {
    private Long next;

    @Override
    public void initializeState(FunctionInitializationContext context) throws Exception {
        ListState<Long> s = context.getOperatorStateStore().getListState(new ListStateDescriptor<>("non-empty-only", Long.class));
        if (!Iterables.isEmpty(s.get())) {
            next = Iterables.getOnlyElement(s.get()); // decisive non-empty-only
        }
        ListState<Long> u = context.getOperatorStateStore().getListState(new ListStateDescriptor<>("unguarded-only", Long.class));
        next = Iterables.getOnlyElement(u.get()); // decisive unguarded-only
    }
}
