// Stub (our code, not Apache Kafka's): names and signatures of the kafka-clients types the
// connectors' restore classes refer to, so that ecj resolves their restore methods.

package org.apache.kafka.clients.producer;

public class ProducerRecord<K, V> {
    public ProducerRecord(String topic, Integer partition, Long timestamp, K key, V value) {}

    public ProducerRecord(String topic, Integer partition, K key, V value) {}

    public ProducerRecord(String topic, K key, V value) {}

    public ProducerRecord(String topic, V value) {}

    public String topic() {
        return null;
    }

    public Integer partition() {
        return null;
    }
}
