package ops;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.runtime.state.FunctionInitializationContext;

/** Every restored element grouped by a key, then each group committed (Paimon's
 * StoreMultiCommitter.filterAndCommit: groupByTable(...).entrySet()): MERGE-ALL. Near miss: the
 * first group only, unguarded, throws on an empty restore (ONE-UNGUARDED). */
public class GroupedCommit extends Base {
    private final List<String> committed = new ArrayList<>();

    @Override
    public void initializeState(FunctionInitializationContext context) throws Exception {
        ListState<String> s = context.getOperatorStateStore().getListState(new ListStateDescriptor<>("grouped-all", String.class));
        List<String> restored = new ArrayList<>();
        s.get().forEach(restored::add);
        for (Map.Entry<String, List<String>> e : groupByTable(restored).entrySet()) { // decisive grouped-all
            committed.addAll(e.getValue());
        }
        ListState<String> f = context.getOperatorStateStore().getListState(new ListStateDescriptor<>("grouped-first", String.class));
        List<String> restoredFirst = new ArrayList<>();
        f.get().forEach(restoredFirst::add);
        committed.addAll(groupByTable(restoredFirst).entrySet().iterator().next().getValue()); // decisive grouped-first
    }

    private static Map<String, List<String>> groupByTable(List<String> committables) {
        return committables.stream().collect(Collectors.groupingBy(c -> c.substring(0, 1)));
    }
}
