package ops;

import java.util.List;

/** Abstract method: one constant takes get(0) without a check. */
enum PickMode {
    ALL {
        @Override
        int use(List<String> s) {
            int n = 0;
            for (String x : s) {
                n += x.length();
            }
            return n;
        }
    },
    FIRST {
        @Override
        int use(List<String> s) {
            return s.get(0).length(); // decisive enum-first
        }
    };

    abstract int use(List<String> s);
}
