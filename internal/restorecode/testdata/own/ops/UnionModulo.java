package ops;

import java.util.ArrayList;
import java.util.List;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.runtime.state.StateInitializationContext;
import org.apache.flink.shaded.guava31.com.google.common.collect.Iterables;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;

/** Union state: keeps the elements whose index maps to this subtask; a loop keeping the last element (the
 * catalog counts such loops as MERGE-ALL), and Iterables.getLast. */
public class UnionModulo extends AbstractStreamOperator<String> {
    private final List<String> mine = new ArrayList<>();
    private String last;

    @Override
    public void initializeState(StateInitializationContext context) throws Exception {
        ListState<String> s = context.getOperatorStateStore().getUnionListState(new ListStateDescriptor<>("union-modulo", String.class));
        ListState<String> o = context.getOperatorStateStore().getListState(new ListStateDescriptor<>("last-wins", String.class));
        int i = 0;
        for (String e : s.get()) { // decisive union-modulo
            if (i++ % getNumberOfParallelSubtasks() == getIndexOfThisSubtask()) {
                mine.add(e);
            }
        }
        for (String e : o.get()) { // decisive last-wins
            last = e;
        }
        ListState<String> l = context.getOperatorStateStore().getListState(new ListStateDescriptor<>("last-element", String.class));
        last = Iterables.getLast(l.get()); // decisive last-element
    }
}
