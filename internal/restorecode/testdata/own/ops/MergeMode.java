package ops;

import java.util.List;

/** Near miss: every constant reads all elements. */
enum MergeMode {
    COUNT {
        @Override
        int use(List<String> s) {
            int n = 0;
            for (String x : s) { // decisive enum-all
                n++;
            }
            return n;
        }
    },
    SUM {
        @Override
        int use(List<String> s) {
            int n = 0;
            for (String x : s) {
                n += x.length();
            }
            return n;
        }
    };

    abstract int use(List<String> s);
}
