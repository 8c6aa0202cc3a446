// Stub of Apache Flink's API for compiling the restore-analysis fixtures: only the members the
// fixtures use, with the real packages, names and erased signatures. Not Flink's source.

package org.apache.flink.streaming.api.operators;

public interface OneInputStreamOperator<IN, OUT> extends Input<IN> {}
