// Stub (our code, not Apache Kafka's): names and signatures of the kafka-clients types the
// connectors' restore classes refer to, so that ecj resolves their restore methods.

package org.apache.kafka.clients.producer;

import java.util.Properties;
import java.util.concurrent.Future;

public class KafkaProducer<K, V> implements Producer<K, V> {
    public KafkaProducer(Properties properties) {}

    public void initTransactions() {}

    public void beginTransaction() {}

    public void commitTransaction() {}

    public void abortTransaction() {}

    public Future<RecordMetadata> send(ProducerRecord<K, V> record, Callback callback) {
        return null;
    }

    public void flush() {}

    public void close() {}
}
