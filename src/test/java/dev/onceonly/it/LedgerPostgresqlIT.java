package dev.onceonly.it;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.CompletableFuture;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The ledger on PostgreSQL, plus what PostgreSQL lets the test stage exactly: two deliveries racing
 * on one key (the second insert blocks on the first's uncommitted ledger row), and a failure at
 * commit (a deferred constraint trigger).
 */
class LedgerPostgresqlIT extends LedgerContract {

    /** A charge of this amount is refused at commit by the deferred trigger this test installs. */
    static final long REFUSED_AT_COMMIT = 13013;

    LedgerPostgresqlIT() {
        super(LedgerDatabase.POSTGRESQL);
    }

    @BeforeAll
    static void installDeferredTrigger() throws Exception {
        // The demo's table exists once the application has started (Hibernate creates it).
        try (Connection c = LedgerDatabase.POSTGRESQL.connect(); Statement s = c.createStatement()) {
            c.setAutoCommit(false);
            s.execute("select pg_advisory_xact_lock(130130)"); // builds running side by side install it once
            s.execute("create or replace function onceonly_it_refuse_charge() returns trigger language plpgsql as $$"
                    + " begin raise exception 'charge refused at commit' using errcode = '23514'; end $$");
            s.execute("drop trigger if exists onceonly_it_refuse_charge on demo_charge");
            s.execute("create constraint trigger onceonly_it_refuse_charge after insert on demo_charge"
                    + " deferrable initially deferred for each row when (new.amount = " + REFUSED_AT_COMMIT + ")"
                    + " execute function onceonly_it_refuse_charge()");
            c.commit();
        }
    }

    @Test
    void failureAtCommitReleasesTheClaim() throws Exception {
        Payment p = Payment.of(REFUSED_AT_COMMIT);
        assertOutcome(503, "FAILED", post(p.body()));
        assertEquals(0, charges(p.id()));
        assertNull(ledgerHash(p.key().storeKey()), "no ledger row");
        assertNull(redis.get(p.key().storeKey()), "claim released");

        // The redelivery (same payment, an amount the database accepts) is processed.
        assertOutcome(200, "PROCESSED", post("{\"paymentId\": \"" + p.id() + "\", \"amount\": 10}"));
        assertEquals(1, charges(p.id()));
    }

    @Test
    void racingDeliveryWaitsForTheFirstAndIsADuplicateWhenItCommits() throws Exception {
        Payment p = Payment.of(10);
        Race race = race(p.body(), p);
        assertOutcome(200, "PROCESSED", race.first.get());
        // The second waited for the first's row, found it committed, and gets its kept answer.
        assertReplayOf(race.first.get(), race.second.get());
        assertEquals(1, charges(p.id()));
        assertEquals(p.key().comparedHashHex(), ledgerHash(p.key().storeKey()));
        awaitClaimDone(p.key().storeKey());
    }

    @Test
    void racingDeliveryProcessesWhenTheFirstRollsBack() throws Exception {
        Payment p = Payment.of(10);
        Race race = race(p.with(", \"fail\": true"), p);
        assertOutcome(503, "FAILED", race.first.get());
        assertOutcome(200, "PROCESSED", race.second.get());
        assertEquals(1, charges(p.id()));
        assertEquals(p.key().comparedHashHex(), ledgerHash(p.key().storeKey()), "the second delivery's row");
        awaitClaimDone(p.key().storeKey());
    }

    record Race(CompletableFuture<HttpResponse<String>> first, CompletableFuture<HttpResponse<String>> second) {
    }

    /**
     * Stages the race. The test locks the charge table, so the first delivery stops inside its
     * transaction, after its ledger row (uncommitted) and at its charge. The claim is deleted, as
     * if Redis had lost it, so the second delivery gets past the claim store and its ledger insert
     * blocks on the first's row. Then the lock goes and both finish.
     */
    Race race(String firstBody, Payment second) throws Exception {
        try (Connection lock = db.connect(); Connection observer = db.connect()) {
            lock.setAutoCommit(false);
            try (Statement s = lock.createStatement()) {
                s.execute("lock table demo_charge in exclusive mode");
            }
            CompletableFuture<HttpResponse<String>> first = postAsync(firstBody);
            int firstPid = awaitBlockedBy(observer, pid(lock));
            redis.del(second.key().storeKey());

            CompletableFuture<HttpResponse<String>> secondResponse = postAsync(second.body());
            awaitBlockedBy(observer, firstPid);
            lock.rollback(); // releases the table lock: the first delivery goes on, then the second
            return new Race(first, secondResponse);
        }
    }

    static int pid(Connection c) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet r = s.executeQuery("select pg_backend_pid()")) {
            r.next();
            return r.getInt(1);
        }
    }

    /** Waits until some backend waits for a lock held by {@code holder}; returns that backend's pid. */
    static int awaitBlockedBy(Connection observer, int holder) throws Exception {
        int[] waiter = new int[1];
        awaitTrue(() -> {
            try (PreparedStatement s = observer.prepareStatement(
                    "select pid from pg_stat_activity where ? = any(pg_blocking_pids(pid))")) {
                s.setInt(1, holder);
                try (ResultSet r = s.executeQuery()) {
                    if (r.next()) {
                        waiter[0] = r.getInt(1);
                        return true;
                    }
                    return false;
                }
            }
        }, "a backend blocked by pid " + holder);
        return waiter[0];
    }
}
