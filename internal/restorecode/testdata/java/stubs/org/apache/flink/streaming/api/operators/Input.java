// Stub of Apache Flink's API for compiling the restore-analysis fixtures: only the members the
// fixtures use, with the real packages, names and erased signatures. Not Flink's source.

package org.apache.flink.streaming.api.operators;

import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;

public interface Input<IN> {
    void processElement(StreamRecord<IN> element) throws Exception;
}
