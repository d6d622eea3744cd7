package dev.onceonly.internal.engine;

import dev.onceonly.api.MessageRefusedException;
import dev.onceonly.api.Outcome;
import jakarta.json.Json;
import jakarta.json.JsonException;
import jakarta.json.bind.JsonbBuilder;
import jakarta.json.bind.JsonbException;
import jakarta.json.stream.JsonParsingException;
import jakarta.transaction.RollbackException;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.StringReader;
import java.io.UncheckedIOException;
import java.lang.reflect.InvocationTargetException;
import java.net.URL;
import java.net.URLClassLoader;
import java.sql.SQLTransientConnectionException;
import java.time.Duration;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The retry rule on its own: which handler failures are worth another delivery. */
class RetryRuleTest {

    /** An application's exception for a message that can never succeed. */
    static class InvalidOrder extends IllegalArgumentException {
        InvalidOrder(String message) {
            super(message);
        }
    }

    /** An application's exception that is worth retrying although it is an IllegalArgumentException. */
    static class StaleQuote extends IllegalArgumentException {
        StaleQuote() {
            super("quote expired");
        }
    }

    private static final List<Class<? extends Throwable>> DEFAULTS = RetryRule.defaultsVisibleTo(RetryRuleTest.class.getClassLoader());

    private static RetryRule rule(List<Class<? extends Throwable>> retryFor, List<Class<? extends Throwable>> noRetryFor) {
        return new RetryRule(retryFor, noRetryFor, DEFAULTS);
    }

    private static final RetryRule DEFAULTS_ONLY = rule(List.of(), List.of());

    /** Whether the rule lets {@code failure} be delivered again (nothing matched counts as yes). */
    private static boolean retried(RetryRule rule, Throwable failure) {
        RetryRule.Match m = rule.classify(failure);
        return m == null || m.retry();
    }

    @Test
    void theDefaultsAreIllegalArgumentAndTheJsonApisOfTheClassPath() {
        assertEquals(List.of(IllegalArgumentException.class, JsonException.class, JsonbException.class), DEFAULTS);
    }

    /** JSON-B (and JSON-P) are optional in an application: absent, they are left out rather than failing the start. */
    @Test
    void defaultsTheApplicationCannotLoadAreLeftOut() throws IOException {
        try (URLClassLoader withoutJson = new URLClassLoader(new URL[0], ClassLoader.getPlatformClassLoader())) {
            assertEquals(List.of(IllegalArgumentException.class), RetryRule.defaultsVisibleTo(withoutJson));
        }
    }

    @Test
    void byDefaultBadInputIsNotRetriedAndEverythingElseIs() {
        assertFalse(retried(DEFAULTS_ONLY, new NumberFormatException("For input string: \"abc\"")));
        assertFalse(retried(DEFAULTS_ONLY, new InvalidOrder("quantity must be positive")));
        JsonParsingException notJson = assertThrows(JsonParsingException.class,
                () -> Json.createReader(new StringReader("{\"quantity\":")).readObject());
        assertFalse(retried(DEFAULTS_ONLY, notJson), "a JSON-P parse error");
        JsonbException badJsonb = assertThrows(JsonbException.class,
                () -> JsonbBuilder.create().fromJson("{\"quantity\":\"abc\"}", Quantity.class));
        assertFalse(retried(DEFAULTS_ONLY, badJsonb), "a JSON-B mapping error");

        assertNull(DEFAULTS_ONLY.classify(new IllegalStateException("shipping answered HTTP 503")));
        assertNull(DEFAULTS_ONLY.classify(new UncheckedIOException(new IOException("connection reset"))));
        assertNull(DEFAULTS_ONLY.classify(new ClassCastException("two class loaders' copies of one class")));
        assertNull(DEFAULTS_ONLY.classify(new OutOfMemoryError()));
    }

    /** A typed payload for JSON-B. */
    public static class Quantity {
        public int quantity;
    }

    /** Wrappers a container or interceptor puts around the application's exception are looked through. */
    @Test
    void theCauseChainIsWalked() {
        InvalidOrder cause = new InvalidOrder("quantity must be a whole number");
        RuntimeException invocation = new RuntimeException(new InvocationTargetException(cause));
        RetryRule.Match m = DEFAULTS_ONLY.classify(invocation);
        assertNotNull(m);
        assertFalse(m.retry());
        assertSame(cause, m.exception(), "decided by the application's exception");

        RollbackException rollback = new RollbackException("transaction rolled back");
        rollback.initCause(new NumberFormatException("For input string: \"abc\""));
        assertFalse(retried(DEFAULTS_ONLY, rollback));

        RetryRule mine = rule(List.of(), List.of(SQLTransientConnectionException.class));
        assertFalse(retried(mine, new IllegalStateException("commit failed", new SQLTransientConnectionException("gone"))),
                "a checked exception listed is found under an unchecked wrapper");
    }

    @Test
    void subclassesOfAListedClassMatch() {
        RetryRule rule = rule(List.of(), List.of(IOException.class));
        assertFalse(retried(rule, new java.io.FileNotFoundException("orders.csv")));
        assertNull(rule(List.of(), List.of(InvalidOrder.class)).classify(new IllegalStateException("x")));
    }

    /** retry-for carves exceptions out of no-retry-for (and out of the defaults): the more specific class wins. */
    @Test
    void aMoreSpecificClassBeatsAMoreGeneralOne() {
        RetryRule rule = rule(List.of(StaleQuote.class), List.of(IllegalArgumentException.class));
        assertTrue(retried(rule, new StaleQuote()));
        assertFalse(retried(rule, new InvalidOrder("bad")));

        RetryRule general = rule(List.of(RuntimeException.class), List.of(InvalidOrder.class));
        assertFalse(retried(general, new InvalidOrder("bad")));
        assertTrue(retried(general, new IllegalStateException("down")));
    }

    /**
     * Wherever each matched in the chain: a broad retry-for class matching the wrapper does not hide
     * a specific no-retry-for class matching its cause.
     */
    @Test
    void specificityCountsAcrossTheWholeChain() {
        RetryRule rule = rule(List.of(Exception.class), List.of(InvalidOrder.class));
        RuntimeException wrapped = new RuntimeException("handler failed", new InvalidOrder("bad"));
        RetryRule.Match m = rule.classify(wrapped);
        assertFalse(m.retry());
        assertEquals(InvalidOrder.class, m.listed());
    }

    /** Between unrelated classes, the one matching nearest to the thrown exception decides. */
    @Test
    void betweenUnrelatedClassesTheNearestMatchDecides() {
        RetryRule rule = rule(List.of(SQLTransientConnectionException.class), List.of(IllegalStateException.class));
        assertFalse(retried(rule, new IllegalStateException("outer", new SQLTransientConnectionException("inner"))));
        assertTrue(retried(rule, new RuntimeException(new SQLTransientConnectionException("outer",
                new IllegalStateException("inner")))));
    }

    @Test
    void aClassInBothListsIsRetried() {
        RetryRule rule = rule(List.of(InvalidOrder.class), List.of(InvalidOrder.class));
        assertTrue(retried(rule, new InvalidOrder("bad")));
    }

    /** The defaults count only when nothing listed matches: retry-for=Exception turns them off. */
    @Test
    void theDefaultsCountOnlyWhenNothingListedMatches() {
        RetryRule off = rule(List.of(Exception.class), List.of());
        assertTrue(retried(off, new NumberFormatException("x")));
        assertTrue(retried(off, new RuntimeException(new JsonException("not JSON"))));

        RetryRule.Match byDefault = rule(List.of(), List.of(IOException.class)).classify(new NumberFormatException("x"));
        assertTrue(byDefault.byDefault());
        assertEquals(IllegalArgumentException.class, byDefault.listed());
    }

    /**
     * A refusal of another guarded call, thrown by the handler, keeps its outcome: FAILED and
     * retried, as before, whatever the lists say and whatever caused it.
     */
    @Test
    void aRefusalIsNotClassified() {
        RetryRule broad = rule(List.of(), List.of(RuntimeException.class));
        MessageRefusedException busy = new MessageRefusedException(Outcome.BUSY, "inner", "d", "busy", null);
        assertNull(broad.classify(busy));
        MessageRefusedException rejected = new MessageRefusedException(Outcome.REJECTED, "inner", "", "no key",
                new IllegalArgumentException("no orderId"));
        assertNull(DEFAULTS_ONLY.classify(new IllegalStateException(rejected.getMessage(), rejected)));
    }

    @Test
    void aLoopOfCausesEnds() {
        IllegalStateException a = new IllegalStateException("a");
        IllegalStateException b = new IllegalStateException("b", a);
        a.initCause(b);
        RuntimeException looped = new RuntimeException(new IllegalStateException("c", b));
        assertTimeoutPreemptively(Duration.ofSeconds(5), () -> {
            assertNull(DEFAULTS_ONLY.classify(a));
            assertNull(rule(List.of(), List.of(IOException.class)).classify(looped));
            assertNull(RetryRule.passedOnRefusal(a));
        });
    }

    /** At most 32 links are walked, the thrown exception the first: a cause deeper down is not seen. */
    @Test
    void theWalkStopsAfter32Links() {
        RetryRule invalid = rule(List.of(), List.of(InvalidOrder.class));
        assertFalse(retried(invalid, wrapped(new InvalidOrder("x"), 31)), "the 32nd link is seen");
        assertTrue(retried(invalid, wrapped(new InvalidOrder("x"), 32)), "the 33rd is not");
        MessageRefusedException busy = new MessageRefusedException(Outcome.BUSY, "inner", "d", "busy", null);
        assertSame(busy, RetryRule.passedOnRefusal(wrapped(busy, 31)));
        assertNull(RetryRule.passedOnRefusal(wrapped(busy, 32)));
    }

    private static Throwable wrapped(Throwable t, int times) {
        for (int i = 0; i < times; i++) {
            t = new RuntimeException(t);
        }
        return t;
    }

    /** The reason goes to logs, events and dead-letter headers: class names only, never the message's text. */
    @Test
    void theReasonNamesTheClassesAndNotTheExceptionsMessage() {
        String secret = "card 4111 1111 1111 1111";
        assertEquals("not retried: " + InvalidOrder.class.getName() + " matches the default no-retry-for java.lang.IllegalArgumentException",
                DEFAULTS_ONLY.classify(new InvalidOrder(secret)).reason());
        assertEquals("not retried: " + InvalidOrder.class.getName() + " is in no-retry-for",
                rule(List.of(), List.of(InvalidOrder.class)).classify(new RuntimeException(new InvalidOrder(secret))).reason());
    }

    @Test
    void theStartupLogShowsTheWholeRule() {
        assertEquals("no-retry-for=[" + InvalidOrder.class.getName() + "], retry-for=[" + StaleQuote.class.getName()
                        + "], default no-retry-for=[java.lang.IllegalArgumentException,jakarta.json.JsonException,jakarta.json.bind.JsonbException]",
                rule(List.of(StaleQuote.class), List.of(InvalidOrder.class)).describe());
    }

    @Test
    void listsAreCopied() {
        List<Class<? extends Throwable>> mutable = new java.util.ArrayList<>(List.of(IOException.class));
        RetryRule rule = rule(List.of(), mutable);
        mutable.clear();
        assertEquals(List.of(IOException.class), rule.noRetryFor());
        assertThrows(NullPointerException.class, () -> new RetryRule(null, List.of(), List.of()));
    }
}
