package org.apache.flink.core.plugin;

import org.apache.flink.configuration.Configuration;

/** Compile-time mirror of Flink's {@code Plugin} (flink-core); see spi-stubs/real-api.txt. */
public interface Plugin {

    default ClassLoader getClassLoader() {
        return getClass().getClassLoader();
    }

    default void configure(Configuration config) {}
}
