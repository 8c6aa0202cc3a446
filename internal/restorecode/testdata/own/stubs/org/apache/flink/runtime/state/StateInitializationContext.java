package org.apache.flink.runtime.state;

/** Test stand-in for Flink's StateInitializationContext. */
public interface StateInitializationContext extends FunctionInitializationContext {}
