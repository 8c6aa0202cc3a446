package com.github.flinkpreflight.validator;

import org.apache.flink.kubernetes.operator.api.validation.FlinkResourceValidator;

/**
 * The Preflight {@code FlinkResourceValidator} for the operator's main branch, where FLINK-40106 moved the interface to the api module (package {@code org.apache.flink.kubernetes.operator.api.validation}). The operator
 * finds it through {@code META-INF/services/org.apache.flink.kubernetes.operator.api.validation.FlinkResourceValidator}; an
 * operator without that interface never loads this class. The methods are
 * {@link OperatorValidator}'s.
 */
public final class MainOperatorValidator extends OperatorValidator implements FlinkResourceValidator {}
