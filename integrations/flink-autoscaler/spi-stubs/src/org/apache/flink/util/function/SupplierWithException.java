package org.apache.flink.util.function;

/** Compile-only mirror of Flink's {@code SupplierWithException} (flink-core). */
@FunctionalInterface
public interface SupplierWithException<R, E extends Throwable> {

    R get() throws E;
}
