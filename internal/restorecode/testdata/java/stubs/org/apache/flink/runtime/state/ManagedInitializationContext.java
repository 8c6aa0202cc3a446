// Stub of Apache Flink's API for compiling the restore-analysis fixtures: only the members the
// fixtures use, with the real packages, names and erased signatures. Not Flink's source.

package org.apache.flink.runtime.state;

import org.apache.flink.api.common.state.KeyedStateStore;
import org.apache.flink.api.common.state.OperatorStateStore;

import java.util.OptionalLong;

public interface ManagedInitializationContext {
    boolean isRestored();

    OptionalLong getRestoredCheckpointId();

    OperatorStateStore getOperatorStateStore();

    KeyedStateStore getKeyedStateStore();
}
