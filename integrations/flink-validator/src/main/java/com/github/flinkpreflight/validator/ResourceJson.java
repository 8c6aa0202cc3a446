package com.github.flinkpreflight.validator;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;

/**
 * Serializes a FlinkDeployment or FlinkSessionJob with the operator's own JSON mapper: a plain
 * Jackson {@code ObjectMapper}, as the operator's {@code SpecUtils} writes
 * {@code lastReconciledSpec} and its webhook reads the admitted object. The resources are fabric8
 * CustomResources with Jackson annotations, so this is exactly the document kubectl sees.
 *
 * <p>The mapper is reached through the resource's own class loader, reflectively: a released
 * operator's plugin class loader hands plugins only {@code org.apache.flink} (and logging)
 * classes, so a direct reference to {@code com.fasterxml} from this jar would fail to link there
 * (main passes {@code com.fasterxml} and {@code io.fabric8} to plugins since FLINK-39688, and this
 * works the same there).
 */
final class ResourceJson {

    static final String MAPPER_CLASS = "com.fasterxml.jackson.databind.ObjectMapper";
    static final String WRITE_METHOD = "writeValueAsString";

    /** A resource the operator's mapper could not write, or no mapper next to the resource. */
    static final class SerializationException extends Exception {
        private static final long serialVersionUID = 1L;

        SerializationException(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /** The mapper of one class loader; ObjectMapper is thread-safe once configured. */
    private static final class Mapper {
        final ClassLoader loader;
        final Object instance;
        final Method write;

        Mapper(ClassLoader loader, Object instance, Method write) {
            this.loader = loader;
            this.instance = instance;
            this.write = write;
        }
    }

    private volatile Mapper mapper;

    String write(Object resource) throws SerializationException {
        Mapper m = mapperFor(resource.getClass().getClassLoader());
        try {
            return (String) m.write.invoke(m.instance, resource);
        } catch (InvocationTargetException e) {
            Throwable c = e.getCause() == null ? e : e.getCause();
            throw new SerializationException(
                    "the operator's ObjectMapper cannot write the "
                            + resource.getClass().getSimpleName() + ": " + c,
                    c);
        } catch (IllegalAccessException | RuntimeException e) {
            throw new SerializationException(
                    MAPPER_CLASS + "." + WRITE_METHOD + " failed: " + e, e);
        }
    }

    private Mapper mapperFor(ClassLoader loader) throws SerializationException {
        Mapper m = mapper;
        if (m != null && m.loader == loader) {
            return m;
        }
        try {
            Class<?> type = Class.forName(MAPPER_CLASS, true, loader);
            Object instance = type.getConstructor().newInstance();
            m = new Mapper(loader, instance, type.getMethod(WRITE_METHOD, Object.class));
        } catch (ReflectiveOperationException | LinkageError | RuntimeException e) {
            throw new SerializationException(
                    "no usable " + MAPPER_CLASS + " next to the operator's resource classes: " + e, e);
        }
        mapper = m;
        return m;
    }
}
