package ops;

import java.util.ArrayList;
import java.util.List;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.runtime.state.FunctionInitializationContext;

/** Every element kept: a loop, addAll, forEach with a lambda, and a max over union elements. */
public class MergeLoop extends Base {
    private final List<String> pending = new ArrayList<>();
    private final List<String> more = new ArrayList<>();
    private final List<String> lambdaKept = new ArrayList<>();
    private long maxCounter;

    @Override
    public void initializeState(FunctionInitializationContext context) throws Exception {
        ListState<String> a = context.getOperatorStateStore().getListState(new ListStateDescriptor<>("merge-loop", String.class));
        ListState<String> b = context.getOperatorStateStore().getListState(new ListStateDescriptor<>("merge-addall", String.class));
        ListState<String> c = context.getOperatorStateStore().getListState(new ListStateDescriptor<>("merge-lambda", String.class));
        ListState<Long> d = context.getOperatorStateStore().getUnionListState(new ListStateDescriptor<>("max-part-counter", Long.class));
        for (String s : a.get()) { // decisive merge-loop
            pending.add(s);
        }
        more.addAll((java.util.Collection<String>) b.get()); // decisive merge-addall
        c.get().forEach(x -> lambdaKept.add(x)); // decisive merge-lambda
        for (Long counter : d.get()) { // decisive max-part-counter
            maxCounter = Math.max(counter, maxCounter);
        }
    }
}
