package org.apache.flink.client.program.rest;

import org.apache.flink.client.program.ClusterClient;
import org.apache.flink.configuration.Configuration;

/**
 * Compile-only mirror of Flink's {@code RestClusterClient} (flink-clients), reduced to its
 * {@link ClusterClient} face. The real client finds the REST endpoint through its HA services (in
 * the operator: {@code http://<cluster-id>-rest.<namespace>:<rest.port>}); this stand-in, used by
 * the adapter's tests, builds it from {@code rest.address} and {@code rest.port} (default 8081).
 *
 * @param <T> type of the cluster id
 */
public class RestClusterClient<T> implements ClusterClient<T> {

    private final Configuration configuration;
    private final T clusterId;

    public RestClusterClient(Configuration config, T clusterId) throws Exception {
        this.configuration = new Configuration(config);
        this.clusterId = clusterId;
    }

    @Override
    public void close() {}

    @Override
    public T getClusterId() {
        return clusterId;
    }

    @Override
    public Configuration getFlinkConfiguration() {
        return new Configuration(configuration);
    }

    @Override
    public String getWebInterfaceURL() {
        return "http://"
                + configuration.getString("rest.address", "localhost")
                + ":"
                + configuration.getString("rest.port", "8081");
    }
}
