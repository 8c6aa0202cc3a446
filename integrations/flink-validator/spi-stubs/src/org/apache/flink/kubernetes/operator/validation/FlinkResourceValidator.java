package org.apache.flink.kubernetes.operator.validation;

import org.apache.flink.core.plugin.Plugin;
import org.apache.flink.kubernetes.operator.api.AbstractFlinkResource;
import org.apache.flink.kubernetes.operator.api.FlinkDeployment;
import org.apache.flink.kubernetes.operator.api.FlinkSessionJob;
import org.apache.flink.kubernetes.operator.api.FlinkStateSnapshot;

import java.util.Optional;

/** Compile-time mirror of the operator's {@code org.apache.flink.kubernetes.operator.validation.FlinkResourceValidator}; see spi-stubs/real-api.txt. */
public interface FlinkResourceValidator extends Plugin {

    Optional<String> validateDeployment(FlinkDeployment deployment);

    Optional<String> validateSessionJob(
            FlinkSessionJob sessionJob, Optional<FlinkDeployment> session);

    Optional<String> validateStateSnapshot(
            FlinkStateSnapshot savepoint, Optional<AbstractFlinkResource<?, ?>> target);
}
