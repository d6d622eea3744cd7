package dev.onceonly.internal.engine;

import dev.onceonly.api.MessageRefusedException;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/**
 * Which failures of a guarded method are worth retrying: the consumer's {@code retry-for} and
 * {@code no-retry-for} classes, and the built-in defaults. Resolved and validated once at startup by
 * the configuration layer; immutable. Only what the method threw is classified: a failure of the
 * guard's own commit after the method returned (the database's, not the message's) is retried.
 *
 * <p>The rule (docs/consumers.md, "Which failures are retried"):
 * <ol>
 *   <li>The exception the method threw is looked at, then its cause, that one's cause and so on, so
 *       a wrapper a container or an interceptor put around the application's exception
 *       ({@code InvocationTargetException}, {@code EJBException}, {@code TransactionalException}) is
 *       looked through. The walk stops at a {@link MessageRefusedException}: the refusal of another
 *       guarded call is not classified (the guard reports it as this message's outcome, see
 *       {@code GuardedCall}).</li>
 *   <li>Of the listed classes that anything in that chain is an instance of, a more specific one
 *       beats a more general one (a subclass beats its superclass), wherever in the chain each
 *       matched; between unrelated classes, the one matching nearest to the thrown exception decides.
 *       A class in both lists is retried.</li>
 *   <li>The defaults count only when nothing in the chain matches either list, and then decide the
 *       same way. So {@code retry-for=java.lang.Exception} turns them off.</li>
 *   <li>Nothing matched: retried, as every failure was before.</li>
 * </ol>
 *
 * @param retryFor   exception classes worth retrying ({@code retry-for})
 * @param noRetryFor exception classes not worth retrying ({@code no-retry-for})
 * @param defaults   the built-in classes not worth retrying that the application can load
 *                   ({@link #defaultsVisibleTo})
 */
public record RetryRule(List<Class<? extends Throwable>> retryFor, List<Class<? extends Throwable>> noRetryFor,
                        List<Class<? extends Throwable>> defaults) {

    /**
     * The built-in classes not worth retrying, by name: failures that come from the message itself
     * and fail the same way on every delivery. {@code IllegalArgumentException} (with
     * {@code NumberFormatException}), the JSON-P {@code JsonException} (with its
     * {@code JsonParsingException}) and the JSON-B {@code JsonbException}. The JSON APIs are optional
     * in an application (JSON-B is), so they are looked up by name and left out when absent.
     * {@code ClassCastException} is not among them: after a redeployment it can come from two class
     * loaders' copies of one class, which the next delivery no longer meets.
     */
    public static final List<String> DEFAULT_NO_RETRY_FOR = List.of(
            "java.lang.IllegalArgumentException", "jakarta.json.JsonException", "jakarta.json.bind.JsonbException");

    /** Bound on the cause chain walked: real chains are a few links long; a longer one is a loop. */
    private static final int MAX_CAUSES = 32;

    /**
     * Copies the lists.
     *
     * @param retryFor   exception classes worth retrying
     * @param noRetryFor exception classes not worth retrying
     * @param defaults   the built-in classes not worth retrying
     * @throws NullPointerException when a list or an element is {@code null}
     */
    public RetryRule {
        retryFor = List.copyOf(retryFor);
        noRetryFor = List.copyOf(noRetryFor);
        defaults = List.copyOf(defaults);
    }

    /**
     * The built-in classes of {@link #DEFAULT_NO_RETRY_FOR} that {@code loader} can load; the others
     * are left out. Loaded without being initialised.
     *
     * @param loader the application's class loader, {@code null} for the bootstrap loader
     * @return the loadable default classes, in the order of {@link #DEFAULT_NO_RETRY_FOR}
     */
    public static List<Class<? extends Throwable>> defaultsVisibleTo(ClassLoader loader) {
        List<Class<? extends Throwable>> found = new ArrayList<>();
        for (String name : DEFAULT_NO_RETRY_FOR) {
            try {
                Class<?> c = Class.forName(name, false, loader);
                if (Throwable.class.isAssignableFrom(c)) {
                    found.add(c.asSubclass(Throwable.class));
                }
            } catch (ClassNotFoundException | LinkageError absent) {
                // The application does not have this API (no jsonb feature): nothing of it can be thrown.
            }
        }
        return found;
    }

    /** {@return the rule in one line, for the startup log} */
    public String describe() {
        return "no-retry-for=" + names(noRetryFor) + ", retry-for=" + names(retryFor) + ", default no-retry-for=" + names(defaults);
    }

    private static String names(List<Class<? extends Throwable>> classes) {
        return classes.stream().map(Class::getName).collect(Collectors.joining(",", "[", "]"));
    }

    /**
     * Classifies a failure of the guarded method by the rule in the class description.
     *
     * @param failure what the method threw
     * @return the match that decided; {@code null} when nothing matched (the failure is retried)
     */
    Match classify(Throwable failure) {
        List<Throwable> chain = chain(failure);
        Match mine = decide(chain, retryFor, noRetryFor, false);
        return mine != null ? mine : decide(chain, List.of(), defaults, true);
    }

    /**
     * The refusal of another guarded call that {@code failure} passes on: the first
     * {@link MessageRefusedException} in its cause chain (where {@link #classify} stops), when it is a
     * refusal. A passed-on DUPLICATE is not one: the handler's own work rolled back with it and must
     * run again, so that stays a failure.
     *
     * @param failure what the method threw
     * @return the refusal, or {@code null}
     */
    static MessageRefusedException passedOnRefusal(Throwable failure) {
        int links = 0;
        for (Throwable t = failure; t != null && links++ < MAX_CAUSES; t = t.getCause()) {
            if (t instanceof MessageRefusedException refused) {
                return refused.outcome().isRefusal() ? refused : null;
            }
        }
        return null;
    }

    /**
     * The thrown exception and its causes, up to a refusal or {@link #MAX_CAUSES}: the bound also ends
     * a loop of causes ({@code initCause} allows one across two exceptions).
     */
    private static List<Throwable> chain(Throwable failure) {
        List<Throwable> chain = new ArrayList<>();
        for (Throwable t = failure; t != null && !(t instanceof MessageRefusedException) && chain.size() < MAX_CAUSES;
             t = t.getCause()) {
            chain.add(t);
        }
        return chain;
    }

    private static Match decide(List<Throwable> chain, List<Class<? extends Throwable>> retry,
                                List<Class<? extends Throwable>> noRetry, boolean byDefault) {
        // In chain order, and at each exception retry-for first: the first match that no other match
        // is more specific than is the nearest most specific one, and retry-for wins a tie.
        List<Match> found = new ArrayList<>();
        for (Throwable t : chain) {
            for (Class<? extends Throwable> c : retry) {
                if (c.isInstance(t)) {
                    found.add(new Match(t, c, true, byDefault));
                }
            }
            for (Class<? extends Throwable> c : noRetry) {
                if (c.isInstance(t)) {
                    found.add(new Match(t, c, false, byDefault));
                }
            }
        }
        for (Match m : found) {
            boolean beaten = false;
            for (Match other : found) {
                if (other.listed() != m.listed() && m.listed().isAssignableFrom(other.listed())) {
                    beaten = true;
                    break;
                }
            }
            if (!beaten) {
                return m;
            }
        }
        return null;
    }

    /**
     * The listed class that decided, and the exception in the chain it matched.
     *
     * @param exception the exception in the cause chain that matched
     * @param listed    the listed class it is an instance of
     * @param retry     whether that class is {@code retry-for}
     * @param byDefault whether it is one of the built-in defaults
     */
    record Match(Throwable exception, Class<? extends Throwable> listed, boolean retry, boolean byDefault) {

        /**
         * Why a match that is not retried is not: class names only, since an exception's message
         * may quote the body and this goes to logs and events.
         */
        String reason() {
            String list = byDefault ? "the default no-retry-for" : "no-retry-for";
            String name = exception.getClass().getName();
            return "not retried: " + name
                    + (listed == exception.getClass() ? " is in " + list : " matches " + list + " " + listed.getName());
        }
    }
}
