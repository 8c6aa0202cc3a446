package ops;

import java.util.HashMap;
import java.util.Map;
import org.apache.flink.api.common.state.BroadcastState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.runtime.state.FunctionInitializationContext;

/** A broadcast state whose entries are all read on restore. */
public class BroadcastOp extends Base {
    private final Map<String, String> rules = new HashMap<>();

    @Override
    public void initializeState(FunctionInitializationContext context) throws Exception {
        BroadcastState<String, String> s =
                context.getOperatorStateStore().getBroadcastState(new MapStateDescriptor<>("rules", String.class, String.class));
        for (Map.Entry<String, String> e : s.entries()) { // decisive rules
            rules.put(e.getKey(), e.getValue());
        }
    }
}
