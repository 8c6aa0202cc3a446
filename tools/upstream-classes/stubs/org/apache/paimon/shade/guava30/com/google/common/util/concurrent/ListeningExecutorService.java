package org.apache.paimon.shade.guava30.com.google.common.util.concurrent;

import java.util.concurrent.ExecutorService;

/** Compile-only stub of Guava's ListeningExecutorService (Paimon's relocated copy). */
public interface ListeningExecutorService extends ExecutorService {}
