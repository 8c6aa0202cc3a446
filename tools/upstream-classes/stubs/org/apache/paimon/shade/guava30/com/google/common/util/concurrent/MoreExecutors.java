package org.apache.paimon.shade.guava30.com.google.common.util.concurrent;

/** Compile-only stub of Guava's MoreExecutors (Paimon's relocated copy): the signature only. */
public final class MoreExecutors {
    private MoreExecutors() {}

    public static ListeningExecutorService newDirectExecutorService() {
        throw new UnsupportedOperationException("stub");
    }
}
