// Stub (our code, not Apache Kafka's): names and signatures of the kafka-clients types the
// connectors' restore classes refer to, so that ecj resolves their restore methods.

package org.apache.kafka.clients.producer;

public class ProducerConfig {
    public static final String BOOTSTRAP_SERVERS_CONFIG = "bootstrap.servers";
    public static final String KEY_SERIALIZER_CLASS_CONFIG = "key.serializer";
    public static final String VALUE_SERIALIZER_CLASS_CONFIG = "value.serializer";
    public static final String TRANSACTIONAL_ID_CONFIG = "transactional.id";
    public static final String TRANSACTION_TIMEOUT_CONFIG = "transaction.timeout.ms";
    public static final String ENABLE_IDEMPOTENCE_CONFIG = "enable.idempotence";
}
