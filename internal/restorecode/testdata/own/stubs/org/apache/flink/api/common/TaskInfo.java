package org.apache.flink.api.common;

/** Test stand-in for Flink's TaskInfo. */
public interface TaskInfo {
    int getIndexOfThisSubtask();

    int getNumberOfParallelSubtasks();
}
