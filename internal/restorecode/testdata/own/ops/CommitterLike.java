package ops;

import org.apache.flink.runtime.state.StateInitializationContext;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;

/** The shape of PartitionCommitter: initializeState creates a trigger that restores state. */
public class CommitterLike extends AbstractStreamOperator<Void> {
    private transient TriggerLike trigger;

    @Override
    public void initializeState(StateInitializationContext context) throws Exception {
        super.initializeState(context);
        trigger = new TriggerLike(context.isRestored(), context.getOperatorStateStore());
    }
}
