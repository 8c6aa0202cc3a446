package ops;

import java.util.ArrayList;
import java.util.List;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.runtime.state.FunctionInitializationContext;

/** The restored elements handed to an enum's method, the shape of flink-connector-kafka's
 * TransactionOwnership: the constant is chosen at run time, so every constant's body is followed
 * and the worst label wins. The enums are top-level classes of their own files, as in the
 * connector, so the operator's class file does not name their constant bodies. */
public class EnumDispatch extends Base {
    private PickMode pick = PickMode.ALL;
    private MergeMode merge = MergeMode.COUNT;
    private OverriddenMode override = OverriddenMode.PLAIN;

    @Override
    public void initializeState(FunctionInitializationContext context) throws Exception {
        ListState<String> a = context.getOperatorStateStore().getListState(new ListStateDescriptor<>("enum-first", String.class));
        ListState<String> b = context.getOperatorStateStore().getListState(new ListStateDescriptor<>("enum-all", String.class));
        ListState<String> c = context.getOperatorStateStore().getListState(new ListStateDescriptor<>("enum-override", String.class));
        pick.use(copy(a));
        merge.use(copy(b));
        override.use(copy(c));
    }

    private static List<String> copy(ListState<String> s) throws Exception {
        List<String> out = new ArrayList<>();
        for (String x : s.get()) {
            out.add(x);
        }
        return out;
    }
}
