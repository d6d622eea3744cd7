package dev.onceonly.http;

import dev.onceonly.api.DeadLetterFilter;
import dev.onceonly.internal.support.Durations;
import jakarta.json.Json;
import jakarta.json.JsonException;
import jakarta.json.JsonNumber;
import jakarta.json.JsonObject;
import jakarta.json.JsonReader;
import jakarta.json.JsonString;
import jakarta.json.JsonValue;

import java.io.StringReader;
import java.math.BigInteger;
import java.time.Duration;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;

/**
 * The parameters of a state-changing call of {@link DeadLetterResource}, read from its JSON body
 * only: a cross-site form can post a form or text body to an operator's browser session, but not
 * {@code application/json} without a CORS preflight the application does not grant. Every field is
 * checked: an unknown one (a typo such as {@code dryrun} would otherwise discard for real) or one of
 * the wrong type is refused, never ignored.
 *
 * @param filter which dead letters ({@code outcome}, {@code reason}, {@code consumer}, {@code olderThan})
 * @param dryRun only list what the call would touch ({@code dryRun})
 * @param waitFor how long to wait for the guard's decisions ({@code wait}, default {@value #DEFAULT_WAIT}, at most
 * {@link #MAX_WAIT})
 * @param offset a dry run's matching dead letters to skip ({@code offset}, default 0)
 * @param limit  a dry run's page ({@code limit}, default {@value #DEFAULT_LIMIT}, at most {@value #MAX_LIMIT})
 * @param unverified replay one unverified dead letter as a new message ({@code unverified})
 */
record DeadLetterRequest(DeadLetterFilter filter, boolean dryRun, Duration waitFor, int offset, int limit,
                         boolean unverified) {

    /** The only body type a state-changing call accepts. */
    static final String JSON = "application/json";
    static final String DEFAULT_WAIT = "5s";
    /**
     * The longest a call waits for the guard's decisions: it holds a server thread meanwhile, and a
     * proxy in front of the server gives up on the request well before much longer. Above it the call
     * is refused rather than shortened, so that an operator never reads a shorter wait's
     * {@code PUBLISHED} as the one asked for.
     */
    static final Duration MAX_WAIT = Duration.ofMinutes(1);
    static final int DEFAULT_LIMIT = 50;
    /** The largest page of a listing or a dry run: each is read from the broker and held in memory whole. */
    static final int MAX_LIMIT = 500;

    /** The fields of a replay of one: {@code unverified} for an unverified letter an operator looked at. */
    static final Set<String> REPLAY_ONE = Set.of("wait", "unverified");
    /** The fields of a replay of all matching. */
    static final Set<String> REPLAY_ALL = Set.of("outcome", "reason", "consumer", "olderThan", "dryRun", "offset",
            "limit", "wait");
    /** The fields of a discard of all matching. */
    static final Set<String> DISCARD_ALL = Set.of("outcome", "reason", "consumer", "olderThan", "dryRun", "offset",
            "limit");

    /**
     * A request refused, with the HTTP status and what to change: never quoting more of the body than a field's
     * name.
     */
    static final class Refused extends RuntimeException {
        private final int status;

        Refused(int status, String detail) {
            super(detail, null, false, false);
            this.status = status;
        }

        /** {@return 415 for a body that is not JSON, 400 for a JSON body that is not a valid request} */
        int status() {
            return status;
        }
    }

    /**
     * Reads a call's body.
     *
     * @param contentType the request's {@code Content-Type}; {@code null} when it has none
     * @param body        the request's body; {@code null} or blank for none
     * @param fields      the fields this call takes
     * @return the request
     * @throws Refused when the body is not a JSON object of those fields with valid values
     */
    static DeadLetterRequest parse(String contentType, String body, Set<String> fields) {
        if (!isJson(contentType)) {
            throw new Refused(415, "the body must be " + JSON + " (a JSON object, {} for no parameters)");
        }
        JsonObject o = object(body);
        TreeSet<String> unknown = new TreeSet<>(o.keySet());
        unknown.removeAll(fields);
        if (!unknown.isEmpty()) {
            throw new Refused(400, "unknown field " + unknown.first() + "; this call takes " + new TreeSet<>(fields));
        }
        String olderThan = text(o, "olderThan");
        DeadLetterFilter filter = new DeadLetterFilter(text(o, "outcome"), text(o, "reason"), text(o, "consumer"),
                olderThan == null ? null : duration("olderThan", olderThan));
        boolean dryRun = flag(o, "dryRun");
        if (!dryRun && (o.containsKey("offset") || o.containsKey("limit"))) {
            throw new Refused(400, "offset and limit page a dry run only: without dryRun the call touches every "
                    + "matching dead letter");
        }
        String wait = text(o, "wait");
        return new DeadLetterRequest(filter, dryRun, boundedWait(wait == null ? DEFAULT_WAIT : wait),
                number(o, "offset", 0, Integer.MAX_VALUE, 0), number(o, "limit", 0, MAX_LIMIT, DEFAULT_LIMIT),
                flag(o, "unverified"));
    }

    /**
     * Checks a listing's page, as {@link #parse} does a dry run's.
     *
     * @throws Refused when {@code offset} is negative, or {@code limit} negative or above {@value #MAX_LIMIT}
     */
    static void checkPage(int offset, int limit) {
        if (offset < 0) {
            throw new Refused(400, "offset: at least 0");
        }
        if (limit < 0 || limit > MAX_LIMIT) {
            throw new Refused(400, "limit: from 0 to " + MAX_LIMIT);
        }
    }

    /**
     * A duration parameter: {@code 0} or what {@link Durations#ACCEPTED} says.
     *
     * @throws Refused naming {@code name} when it is neither
     */
    static Duration duration(String name, String value) {
        if (value.equals("0") || value.equals("0s")) {
            return Duration.ZERO;
        }
        Duration d = Durations.parse(value);
        if (d == null) {
            throw new Refused(400, name + ": " + Durations.ACCEPTED + ", or 0");
        }
        return d;
    }

    private static Duration boundedWait(String value) {
        Duration d = duration("wait", value);
        if (d.compareTo(MAX_WAIT) > 0) {
            throw new Refused(400, "wait: at most " + Durations.format(MAX_WAIT) + " (0 does not wait, and "
                    + "leaves the dead letter until a replay of it is decided)");
        }
        return d;
    }

    private static boolean isJson(String contentType) {
        if (contentType == null) {
            return false;
        }
        int parameters = contentType.indexOf(';');
        return (parameters < 0 ? contentType : contentType.substring(0, parameters)).trim().toLowerCase(Locale.ROOT)
                .equals(JSON);
    }

    private static JsonObject object(String body) {
        if (body == null || body.isBlank()) {
            throw new Refused(400, "the body must be a JSON object ({} for no parameters)");
        }
        try (JsonReader reader = Json.createReader(new StringReader(body))) {
            return reader.readObject();
        } catch (JsonException | IllegalStateException e) {
            // The parser's message may quote the body: not repeated.
            throw new Refused(400, "the body must be a JSON object ({} for no parameters)");
        }
    }

    /** @return the field's text, {@code null} when absent, null or blank */
    private static String text(JsonObject o, String name) {
        JsonValue v = o.get(name);
        if (v == null || v == JsonValue.NULL) {
            return null;
        }
        if (!(v instanceof JsonString s)) {
            throw new Refused(400, name + ": a string");
        }
        return s.getString().isBlank() ? null : s.getString();
    }

    private static boolean flag(JsonObject o, String name) {
        JsonValue v = o.get(name);
        if (v == null || v == JsonValue.NULL || v == JsonValue.FALSE) {
            return false;
        }
        if (v != JsonValue.TRUE) {
            throw new Refused(400, name + ": true or false");
        }
        return true;
    }

    private static int number(JsonObject o, String name, int min, int max, int absent) {
        JsonValue v = o.get(name);
        if (v == null || v == JsonValue.NULL) {
            return absent;
        }
        if (!(v instanceof JsonNumber n) || !n.isIntegral()
                || n.bigIntegerValue().compareTo(BigInteger.valueOf(min)) < 0
                || n.bigIntegerValue().compareTo(BigInteger.valueOf(max)) > 0) {
            throw new Refused(400, name + ": a whole number from " + min + " to " + max);
        }
        return n.intValue();
    }
}
