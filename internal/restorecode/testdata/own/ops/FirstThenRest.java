package ops;

import java.util.Iterator;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.runtime.state.FunctionInitializationContext;

/** Near-miss: the first element is taken behind hasNext(), then the others in a loop. */
public class FirstThenRest extends Base {
    private long sum;

    @Override
    public void initializeState(FunctionInitializationContext context) throws Exception {
        ListState<Long> s = context.getOperatorStateStore().getListState(new ListStateDescriptor<>("first-then-rest", Long.class));
        Iterator<Long> it = s.get().iterator();
        if (it.hasNext()) {
            sum = it.next();
            while (it.hasNext()) {
                sum += it.next(); // decisive first-then-rest
            }
        }
    }
}
