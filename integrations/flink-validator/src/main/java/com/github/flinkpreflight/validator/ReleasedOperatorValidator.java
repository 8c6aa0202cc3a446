package com.github.flinkpreflight.validator;

import org.apache.flink.kubernetes.operator.validation.FlinkResourceValidator;

/**
 * The Preflight {@code FlinkResourceValidator} for released operators 1.10 to 1.15 (package {@code org.apache.flink.kubernetes.operator.validation}). The operator
 * finds it through {@code META-INF/services/org.apache.flink.kubernetes.operator.validation.FlinkResourceValidator}; an
 * operator without that interface never loads this class. The methods are
 * {@link OperatorValidator}'s.
 */
public final class ReleasedOperatorValidator extends OperatorValidator implements FlinkResourceValidator {}
