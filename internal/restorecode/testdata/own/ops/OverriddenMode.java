package ops;

import java.util.List;

/** Near miss: a concrete method that reads all, overridden by one constant that takes the
 * first: the enum's own method is not the only one that runs. */
enum OverriddenMode {
    PLAIN,
    HEAD {
        @Override
        int use(List<String> s) {
            return s.iterator().next().length(); // decisive enum-override
        }
    };

    int use(List<String> s) {
        int n = 0;
        for (String x : s) {
            n += x.length();
        }
        return n;
    }
}
