package org.apache.flink.client.program;

import org.apache.flink.configuration.Configuration;

/**
 * Compile-only mirror of Flink's {@code ClusterClient} interface (flink-clients), reduced to the
 * methods that need no further Flink types.
 *
 * @param <T> type of the cluster id
 */
public interface ClusterClient<T> extends AutoCloseable {

    @Override
    void close();

    T getClusterId();

    Configuration getFlinkConfiguration();

    /** The REST endpoint's base URL, e.g. {@code http://my-job-rest.ns:8081}. */
    String getWebInterfaceURL();
}
