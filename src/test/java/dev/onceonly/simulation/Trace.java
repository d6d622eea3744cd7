package dev.onceonly.simulation;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Set;

/**
 * What one run did: the faults injected (numbered, so that a shrinking run can leave some out),
 * the last events before the first violation, and the violations. A run's trace is its report: a
 * failing seed prints it.
 */
final class Trace {

    private static final int KEPT_EVENTS = Integer.getInteger("sim.events", 400);

    private final Set<Integer> withheld;
    private final Deque<String> events = new ArrayDeque<>();
    private final List<String> faults = new ArrayList<>();
    private final List<String> violations = new ArrayList<>();
    private List<String> eventsAtFirstViolation;
    private Throwable firstFailure;
    private int faultPoints;
    private SimLoop clock;
    /** Set once the run stops injecting faults and lets the system settle. */
    boolean quiet;

    /** @param withheld numbers of the fault points that must not fire (shrinking); empty for a plain run */
    Trace(Set<Integer> withheld) {
        this.withheld = withheld;
    }

    void clock(SimLoop loop) {
        this.clock = loop;
    }

    /**
     * A fault point: whether the fault fires, by the seed's draw, unless shrinking withholds it.
     * Every point that fires is numbered in the order they fire.
     */
    boolean fault(boolean drawn, String what) {
        if (!drawn || quiet) {
            return false;
        }
        int n = faultPoints++;
        if (withheld.contains(n)) {
            return false;
        }
        faults.add("#" + n + " " + at() + " " + what);
        event("FAULT #" + n + " " + what);
        return true;
    }

    int faultPoints() {
        return faultPoints;
    }

    List<String> faults() {
        return faults;
    }

    void event(String what) {
        if (events.size() == KEPT_EVENTS) {
            events.removeFirst();
        }
        events.addLast(at() + " " + what);
    }

    void violation(String what) {
        if (violations.isEmpty()) {
            event("VIOLATION " + what);
            eventsAtFirstViolation = List.copyOf(events);
        }
        violations.add(what);
    }

    void failure(Throwable t) {
        if (firstFailure == null) {
            firstFailure = t;
        }
    }

    Throwable firstFailure() {
        return firstFailure;
    }

    List<String> violations() {
        return violations;
    }

    boolean failed() {
        return !violations.isEmpty();
    }

    /** The events that led to the first violation (the last {@value #KEPT_EVENTS}). */
    List<String> eventsBeforeViolation() {
        return eventsAtFirstViolation == null ? List.copyOf(events) : eventsAtFirstViolation;
    }

    private String at() {
        return clock == null ? "[--]" : String.format("[%9.3f ms]", clock.now() / 1e6);
    }
}
