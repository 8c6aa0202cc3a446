// Stub (our code, not Apache Kafka's): names and signatures of the kafka-clients types the
// connectors' restore classes refer to, so that ecj resolves their restore methods.

package org.apache.kafka.clients.producer;

import java.io.Closeable;
import java.util.concurrent.Future;

public interface Producer<K, V> extends Closeable {
    void initTransactions();

    void beginTransaction();

    void commitTransaction();

    void abortTransaction();

    Future<RecordMetadata> send(ProducerRecord<K, V> record, Callback callback);

    void flush();
}
