package com.github.flinkpreflight.validator;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.kubernetes.operator.api.AbstractFlinkResource;
import org.apache.flink.kubernetes.operator.api.FlinkDeployment;
import org.apache.flink.kubernetes.operator.api.FlinkSessionJob;
import org.apache.flink.kubernetes.operator.api.FlinkStateSnapshot;
import org.apache.flink.kubernetes.operator.validation.FlinkResourceValidator;

import java.util.Optional;

/**
 * The Preflight {@code FlinkResourceValidator} for released operators 1.10 to 1.15 (package {@code org.apache.flink.kubernetes.operator.validation}). The operator
 * finds it through {@code META-INF/services/org.apache.flink.kubernetes.operator.validation.FlinkResourceValidator}; an
 * operator without that interface never loads this class. All the work is in
 * {@link PreflightValidator}.
 */
public final class ReleasedOperatorValidator implements FlinkResourceValidator {

    private final PreflightValidator validator = new PreflightValidator();

    @Override
    public void configure(Configuration config) {
        validator.configure(() -> config.toMap());
    }

    @Override
    public Optional<String> validateDeployment(FlinkDeployment deployment) {
        return validator.validate(deployment);
    }

    /** The session job alone: preflightd reads the job through its session cluster's REST service. */
    @Override
    public Optional<String> validateSessionJob(
            FlinkSessionJob sessionJob, Optional<FlinkDeployment> session) {
        return validator.validate(sessionJob);
    }

    /** Snapshots change no parallelism. */
    @Override
    public Optional<String> validateStateSnapshot(
            FlinkStateSnapshot savepoint, Optional<AbstractFlinkResource<?, ?>> target) {
        return Optional.empty();
    }
}
