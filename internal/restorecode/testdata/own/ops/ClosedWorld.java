package ops;

import java.util.ArrayList;
import java.util.List;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.runtime.state.FunctionInitializationContext;

/** The restored elements, copied, handed to an interface whose implementation is injected (the
 * shape of SourceOperator's SourceReader.addSplits): the operator's class names none of them, so
 * every implementation the classes hold is followed and the worst label wins. */
public class ClosedWorld extends Base {
    /** Two implementations: one reads all, one takes the first unchecked. */
    public interface Restorer {
        void restore(List<String> restored);
    }

    /** Two implementations, both reading all. */
    public interface Merger {
        void merge(List<String> restored);
    }

    /** Near miss: no implementation among the classes. */
    public interface Unimplemented {
        void restore(List<String> restored);
    }

    /** Near miss: more implementations than the analysis follows for one call (8), all of them
     * reading every element: the call stays an escape. */
    public interface Many {
        void restore(List<String> restored);
    }

    private final Restorer restorer;
    private final Merger merger;
    private final Unimplemented unimplemented;
    private final Many many;

    public ClosedWorld(Restorer restorer, Merger merger, Unimplemented unimplemented, Many many) {
        this.restorer = restorer;
        this.merger = merger;
        this.unimplemented = unimplemented;
        this.many = many;
    }

    @Override
    public void initializeState(FunctionInitializationContext context) throws Exception {
        restorer.restore(copy(context, "closed-first"));
        merger.merge(copy(context, "closed-all"));
        unimplemented.restore(copy(context, "closed-none")); // decisive closed-none
        many.restore(copy(context, "closed-many")); // decisive closed-many
    }

    private static List<String> copy(FunctionInitializationContext context, String name) throws Exception {
        ListState<String> state = context.getOperatorStateStore().getListState(new ListStateDescriptor<>(name, String.class));
        List<String> out = new ArrayList<>();
        for (String x : state.get()) {
            out.add(x);
        }
        return out;
    }
}
