// Stub (our code, not Apache Kafka's): names and signatures of the kafka-clients types the
// connectors' restore classes refer to, so that ecj resolves their restore methods.

package org.apache.kafka.common;

public final class TopicPartition {
    public TopicPartition(String topic, int partition) {}

    public String topic() {
        return null;
    }

    public int partition() {
        return 0;
    }
}
