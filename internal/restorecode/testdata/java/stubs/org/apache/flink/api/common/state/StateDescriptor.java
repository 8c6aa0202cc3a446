// Stub of Apache Flink's API for compiling the restore-analysis fixtures: only the members the
// fixtures use, with the real packages, names and erased signatures. Not Flink's source.

package org.apache.flink.api.common.state;

import java.io.Serializable;

public abstract class StateDescriptor<S extends State, T> implements Serializable {
    protected final String name;

    protected StateDescriptor(String name) {
        this.name = name;
    }

    public String getName() {
        return name;
    }
}
