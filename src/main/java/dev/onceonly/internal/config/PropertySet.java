package dev.onceonly.internal.config;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.function.UnaryOperator;

/**
 * The properties one part of OnceOnly reads, in the order {@code docs/configuration.md} shows
 * them: each part's catalogue class defines its properties through {@link #add}, which lists them
 * here and gives them their full names. Only listed properties can be read, because the
 * {@code ConfigReader} a part reads with takes {@link Property} values, and those come from here.
 *
 * <p>Filled while its catalogue class initialises (one thread, before any read), then only read.
 */
public final class PropertySet {

    private final String title;
    private final String readBy;
    private final String intro;
    private final UnaryOperator<String> fullName;
    private final List<Property> properties = new ArrayList<>();

    /**
     * An empty set.
     *
     * @param title    the part, as the documentation's heading names it
     * @param readBy   the class that reads the part's settings (its simple name, with its package)
     * @param intro    what the documentation says before the table (how names are formed, lookup
     *                 order), Markdown; may be empty
     * @param fullName the full name of a key, with {@code <consumer>} or {@code <channel>} where the
     *                 part fills one in
     */
    public PropertySet(String title, String readBy, String intro, UnaryOperator<String> fullName) {
        this.title = title;
        this.readBy = readBy;
        this.intro = intro;
        this.fullName = fullName;
    }

    /**
     * Lists a property under its full name.
     *
     * @param property the property
     * @return the property as listed, the one to read
     * @throws IllegalArgumentException if the set already has the key
     */
    public Property add(Property property) {
        if (properties.stream().anyMatch(p -> p.key().equals(property.key()))) {
            throw new IllegalArgumentException("listed twice: " + property.key());
        }
        Property listed = property.named(fullName.apply(property.key()));
        properties.add(listed);
        return listed;
    }

    /** {@return the part, as the documentation's heading names it} */
    public String title() {
        return title;
    }

    /** {@return the class that reads the part's settings} */
    public String readBy() {
        return readBy;
    }

    /** {@return what the documentation says before the table, Markdown} */
    public String intro() {
        return intro;
    }

    /** {@return the properties, in the order they were listed} */
    public List<Property> properties() {
        return Collections.unmodifiableList(properties);
    }
}
