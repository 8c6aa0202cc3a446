package org.apache.flink.autoscaler;

import org.apache.flink.autoscaler.metrics.EvaluatedScalingMetric;
import org.apache.flink.autoscaler.metrics.ScalingMetric;

import java.util.Map;
import java.util.Objects;

/**
 * Compile-only mirror of flink-autoscaler's {@code ScalingSummary} (operator main branch). The
 * real class is Lombok {@code @Data @NoArgsConstructor}: getters, setters, equals/hashCode over
 * all three fields, and a three-argument constructor that rejects equal parallelisms. The Jackson
 * {@code @JsonIgnore} on {@link #isScaledUp()} is left out.
 */
public class ScalingSummary {

    private int currentParallelism;

    private int newParallelism;

    private Map<ScalingMetric, EvaluatedScalingMetric> metrics;

    public ScalingSummary() {}

    public ScalingSummary(
            int currentParallelism,
            int newParallelism,
            Map<ScalingMetric, EvaluatedScalingMetric> metrics) {
        if (currentParallelism == newParallelism) {
            // The real constructor refuses a summary that changes nothing.
            throw new IllegalArgumentException("currentParallelism equals newParallelism");
        }
        this.currentParallelism = currentParallelism;
        this.newParallelism = newParallelism;
        this.metrics = metrics;
    }

    public boolean isScaledUp() {
        return newParallelism > currentParallelism;
    }

    public int getCurrentParallelism() {
        return currentParallelism;
    }

    public void setCurrentParallelism(int currentParallelism) {
        this.currentParallelism = currentParallelism;
    }

    public int getNewParallelism() {
        return newParallelism;
    }

    public void setNewParallelism(int newParallelism) {
        this.newParallelism = newParallelism;
    }

    public Map<ScalingMetric, EvaluatedScalingMetric> getMetrics() {
        return metrics;
    }

    public void setMetrics(Map<ScalingMetric, EvaluatedScalingMetric> metrics) {
        this.metrics = metrics;
    }

    @Override
    public boolean equals(Object o) {
        if (this == o) {
            return true;
        }
        if (!(o instanceof ScalingSummary)) {
            return false;
        }
        ScalingSummary other = (ScalingSummary) o;
        return currentParallelism == other.currentParallelism
                && newParallelism == other.newParallelism
                && Objects.equals(metrics, other.metrics);
    }

    @Override
    public int hashCode() {
        return Objects.hash(currentParallelism, newParallelism, metrics);
    }

    @Override
    public String toString() {
        return "ScalingSummary(currentParallelism="
                + currentParallelism
                + ", newParallelism="
                + newParallelism
                + ", metrics="
                + metrics
                + ")";
    }
}
