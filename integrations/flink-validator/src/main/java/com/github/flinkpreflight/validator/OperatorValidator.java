package com.github.flinkpreflight.validator;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.kubernetes.operator.api.AbstractFlinkResource;
import org.apache.flink.kubernetes.operator.api.FlinkDeployment;
import org.apache.flink.kubernetes.operator.api.FlinkSessionJob;
import org.apache.flink.kubernetes.operator.api.FlinkStateSnapshot;

import java.util.Optional;

/**
 * The methods of the operator's {@code FlinkResourceValidator}, whichever package the operator
 * declares it in: {@link MainOperatorValidator} and {@link ReleasedOperatorValidator} each
 * implement one of the two interfaces with these methods. All the work is in
 * {@link PreflightValidator}.
 */
abstract class OperatorValidator {

    private final PreflightValidator validator = new PreflightValidator();

    public void configure(Configuration config) {
        validator.configure(() -> config.toMap());
    }

    public Optional<String> validateDeployment(FlinkDeployment deployment) {
        return validator.validate(deployment);
    }

    /** The session job alone: preflightd reads the job through its session cluster's REST service. */
    public Optional<String> validateSessionJob(
            FlinkSessionJob sessionJob, Optional<FlinkDeployment> session) {
        return validator.validate(sessionJob);
    }

    /** Snapshots change no parallelism. */
    public Optional<String> validateStateSnapshot(
            FlinkStateSnapshot savepoint, Optional<AbstractFlinkResource<?, ?>> target) {
        return Optional.empty();
    }
}
