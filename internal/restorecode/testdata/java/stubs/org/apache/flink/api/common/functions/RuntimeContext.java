// Stub of Apache Flink's API for compiling the restore-analysis fixtures: only the members the
// fixtures use, with the real packages, names and erased signatures. Not Flink's source.

package org.apache.flink.api.common.functions;

import org.apache.flink.api.common.TaskInfo;

public interface RuntimeContext {
    /** Flink 1.x; deprecated in 1.19 and removed in 2.0 in favour of getTaskInfo(). */
    int getIndexOfThisSubtask();

    /** Flink 1.x; deprecated in 1.19 and removed in 2.0 in favour of getTaskInfo(). */
    int getNumberOfParallelSubtasks();

    TaskInfo getTaskInfo();
}
