// Stub (our code, not Apache Kafka's): names and signatures of the kafka-clients types the
// connectors' restore classes refer to, so that ecj resolves their restore methods.

package org.apache.kafka.common.errors;

import org.apache.kafka.common.KafkaException;

public class ApiException extends KafkaException {
    public ApiException(String message) {
        super(message);
    }
}
