package ops;

import java.util.ArrayList;
import java.util.List;

/** Implementations of ClosedWorld's interfaces, in another class the operator does not name. */
final class ClosedWorldImpls {
    private ClosedWorldImpls() {}

    static final class AllRestorer implements ClosedWorld.Restorer {
        private final List<String> kept = new ArrayList<>();

        @Override
        public void restore(List<String> restored) {
            for (String x : restored) {
                kept.add(x);
            }
        }
    }

    static final class FirstRestorer implements ClosedWorld.Restorer {
        private String first;

        @Override
        public void restore(List<String> restored) {
            first = restored.get(0); // decisive closed-first
        }
    }

    abstract static class CountingMerger implements ClosedWorld.Merger {
        int count;

        @Override
        public void merge(List<String> restored) {
            for (String x : restored) { // decisive closed-all
                count++;
            }
        }
    }

    static final class SubMerger extends CountingMerger {}

    static final class SumMerger implements ClosedWorld.Merger {
        private int sum;

        @Override
        public void merge(List<String> restored) {
            for (String x : restored) {
                sum += x.length();
            }
        }
    }

    abstract static class ManyBase implements ClosedWorld.Many {
        int count;

        void each(List<String> restored) {
            for (String x : restored) {
                count++;
            }
        }
    }

    static final class Many1 extends ManyBase {
        @Override
        public void restore(List<String> restored) {
            each(restored);
        }
    }

    static final class Many2 extends ManyBase {
        @Override
        public void restore(List<String> restored) {
            each(restored);
        }
    }

    static final class Many3 extends ManyBase {
        @Override
        public void restore(List<String> restored) {
            each(restored);
        }
    }

    static final class Many4 extends ManyBase {
        @Override
        public void restore(List<String> restored) {
            each(restored);
        }
    }

    static final class Many5 extends ManyBase {
        @Override
        public void restore(List<String> restored) {
            each(restored);
        }
    }

    static final class Many6 extends ManyBase {
        @Override
        public void restore(List<String> restored) {
            each(restored);
        }
    }

    static final class Many7 extends ManyBase {
        @Override
        public void restore(List<String> restored) {
            each(restored);
        }
    }

    static final class Many8 extends ManyBase {
        @Override
        public void restore(List<String> restored) {
            each(restored);
        }
    }

    static final class Many9 extends ManyBase {
        @Override
        public void restore(List<String> restored) {
            each(restored);
        }
    }
}
