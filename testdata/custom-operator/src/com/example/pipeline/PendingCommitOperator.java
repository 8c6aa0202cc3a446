package com.example.pipeline;

import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.runtime.state.StateInitializationContext;
import org.apache.flink.runtime.state.StateSnapshotContext;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * Writes events into an external transaction per checkpoint and commits it once the checkpoint
 * completes. Each subtask keeps its one open transaction in the operator list state
 * "pending-commit" so that a restore can finish it.
 *
 * <p>The restore takes that one element without checking that there is one: after a restore at a
 * higher parallelism the new subtasks get no element and throw NoSuchElementException.
 */
public class PendingCommitOperator extends AbstractStreamOperator<String>
        implements OneInputStreamOperator<String, String> {
    private static final String PENDING_COMMIT = "pending-commit";

    private transient ListState<String> pendingCommit;
    private transient String transactionId;
    private transient List<String> buffered;

    @Override
    public void initializeState(StateInitializationContext context) throws Exception {
        super.initializeState(context);
        pendingCommit = context.getOperatorStateStore().getListState(new ListStateDescriptor<>(PENDING_COMMIT, String.class));
        buffered = new ArrayList<>();
        if (context.isRestored()) {
            transactionId = pendingCommit.get().iterator().next();
            commit(transactionId);
        }
        transactionId = beginTransaction();
    }

    @Override
    public void processElement(StreamRecord<String> element) {
        buffered.add(element.getValue());
    }

    @Override
    public void snapshotState(StateSnapshotContext context) throws Exception {
        super.snapshotState(context);
        preCommit(transactionId, buffered);
        buffered.clear();
        pendingCommit.clear();
        pendingCommit.add(transactionId);
    }

    @Override
    public void notifyCheckpointComplete(long checkpointId) throws Exception {
        super.notifyCheckpointComplete(checkpointId);
        commit(transactionId);
        transactionId = beginTransaction();
    }

    private String beginTransaction() {
        return "txn-" + UUID.randomUUID();
    }

    private void preCommit(String transaction, List<String> events) {
        // Flush the events to the external system under the open transaction.
    }

    private void commit(String transaction) {
        // Commit the transaction in the external system (idempotent).
    }
}
