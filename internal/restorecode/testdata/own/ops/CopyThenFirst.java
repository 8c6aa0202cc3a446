package ops;

import java.util.ArrayList;
import java.util.List;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.runtime.state.FunctionInitializationContext;

/** The shape of Paimon's commit-user restore: copy the union list, check, keep the first. */
public class CopyThenFirst extends Base {
    private String commitUser;

    @Override
    public void initializeState(FunctionInitializationContext context) throws Exception {
        ListState<String> s = context.getOperatorStateStore().getUnionListState(new ListStateDescriptor<>("commit_user_state", String.class));
        List<String> users = new ArrayList<>();
        for (String u : s.get()) {
            users.add(u);
        }
        if (users.isEmpty()) {
            commitUser = "fresh";
        } else {
            commitUser = users.get(0); // decisive commit_user_state
        }
    }
}
