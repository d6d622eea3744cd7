package dev.onceonly.testing;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/** Collects what OnceOnly logs (logger {@code dev.onceonly}) while open. */
public final class LogCapture extends Handler implements AutoCloseable {

    private final Logger logger = Logger.getLogger("dev.onceonly");
    private final List<String> lines = new CopyOnWriteArrayList<>();
    private final List<String> traced = new CopyOnWriteArrayList<>();

    public LogCapture() {
        logger.addHandler(this);
    }

    public List<String> lines() {
        return List.copyOf(lines);
    }

    /** {@return the lines logged with a stack trace} */
    public List<String> traced() {
        return List.copyOf(traced);
    }

    /** {@return the lines that start with {@code id}} */
    public List<String> lines(String id) {
        return lines.stream().filter(l -> l.startsWith(id)).toList();
    }

    public boolean contains(String id) {
        return lines.stream().anyMatch(l -> l.startsWith(id));
    }

    @Override
    public void publish(LogRecord record) {
        if (record.getThrown() != null) {
            traced.add(record.getMessage());
        }
        lines.add(record.getMessage());
    }

    @Override
    public void flush() {
    }

    @Override
    public void close() {
        logger.removeHandler(this);
    }
}
