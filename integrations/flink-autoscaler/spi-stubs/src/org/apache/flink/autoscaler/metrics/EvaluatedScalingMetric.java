package org.apache.flink.autoscaler.metrics;

import java.util.Objects;

/**
 * Compile-only mirror of flink-autoscaler's {@code EvaluatedScalingMetric} (Lombok {@code @Data}
 * with {@code current} and {@code average}). The real constructor also rounds both values; this
 * stand-in keeps them as given.
 */
public class EvaluatedScalingMetric {
    private double current;

    private double average;

    public EvaluatedScalingMetric() {}

    public EvaluatedScalingMetric(double current, double average) {
        this.current = current;
        this.average = average;
    }

    public static EvaluatedScalingMetric of(double current) {
        return new EvaluatedScalingMetric(current, Double.NaN);
    }

    public static EvaluatedScalingMetric avg(double average) {
        return new EvaluatedScalingMetric(Double.NaN, average);
    }

    public double getCurrent() {
        return current;
    }

    public void setCurrent(double current) {
        this.current = current;
    }

    public double getAverage() {
        return average;
    }

    public void setAverage(double average) {
        this.average = average;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof EvaluatedScalingMetric)) {
            return false;
        }
        EvaluatedScalingMetric other = (EvaluatedScalingMetric) o;
        return Double.compare(current, other.current) == 0
                && Double.compare(average, other.average) == 0;
    }

    @Override
    public int hashCode() {
        return Objects.hash(current, average);
    }

    @Override
    public String toString() {
        return "EvaluatedScalingMetric(current=" + current + ", average=" + average + ")";
    }
}
