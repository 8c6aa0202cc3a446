// Stub (our code, not Apache Kafka's): names and signatures of the kafka-clients types the
// connectors' restore classes refer to, so that ecj resolves their restore methods.

package org.apache.kafka.clients.admin;

import java.util.Properties;

public abstract class AdminClient implements Admin {
    public static AdminClient create(Properties props) {
        return null;
    }
}
