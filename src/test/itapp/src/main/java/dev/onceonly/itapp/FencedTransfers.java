package dev.onceonly.itapp;

import dev.onceonly.api.IdempotencyContext;
import dev.onceonly.api.IdempotencyKey;
import dev.onceonly.api.IdempotentMessage;
import dev.onceonly.http.IdempotencyKeyFilter;
import jakarta.annotation.Resource;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.json.Json;
import jakarta.json.JsonObject;
import jakarta.ws.rs.client.Client;
import jakarta.ws.rs.client.ClientBuilder;
import jakarta.ws.rs.client.Entity;
import jakarta.ws.rs.core.Response;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * A guarded transfer whose side effects are outside its transaction, as a handler's calls to other
 * systems are: a row of another system's table (the non-transactional datasource: each statement
 * commits at once) and a call to an HTTP service (the Jakarta REST client with
 * {@link IdempotencyKeyFilter}, which sends {@code Idempotency-Key} and {@code Idempotency-Fence}).
 * Each goes twice: to a row and a resource that check the fence, and to ones that do not. Holder
 * {@code A} stops after its claim until the test resumes it (FencingIT).
 */
@ApplicationScoped
public class FencedTransfers {

    @Inject
    IdempotencyContext idempotency;

    @Resource(lookup = "jdbc/onceonly-claims")
    DataSource otherSystem;

    /** Per transfer: the key of holder A while it waits, and what each holder's writes did. */
    private final Map<String, String> pausedKeys = new ConcurrentHashMap<>();
    private final Map<String, CountDownLatch> resumes = new ConcurrentHashMap<>();
    private final Map<String, JsonObject> writes = new ConcurrentHashMap<>();

    /** The other system's table: per transfer a row that checks the fence and one that does not. */
    void open(String transfer) throws SQLException {
        try (Connection c = otherSystem.getConnection(); Statement s = c.createStatement()) {
            s.execute("create table if not exists it_fenced_account (id varchar(200) primary key, holder varchar(10) not null,"
                    + " fence bigint not null)");
        }
        for (String row : new String[] {transfer + ":checked", transfer + ":unchecked"}) {
            try (Connection c = otherSystem.getConnection();
                 PreparedStatement s = c.prepareStatement("insert into it_fenced_account values (?, 'nobody', 0)")) {
                s.setString(1, row);
                s.executeUpdate();
            }
        }
        resumes.put(transfer, new CountDownLatch(1));
    }

    @IdempotentMessage(consumer = "it-fence", lease = "3s")
    public void transfer(@IdempotencyKey String transfer, String holder, String serviceBase) throws Exception {
        long fence = idempotency.fence().orElseThrow();
        if (holder.equals("A")) {
            // Frozen past its lease: the test lets the claim run out meanwhile and B take it over.
            pausedKeys.put(transfer, idempotency.key().orElseThrow());
            resumes.get(transfer).await(60, TimeUnit.SECONDS);
        }
        JsonObject done = Json.createObjectBuilder()
                .add("fence", fence)
                .add("checkedRows", update(transfer + ":checked", holder, fence, true))
                .add("uncheckedRows", update(transfer + ":unchecked", holder, fence, false))
                .add("checkedStatus", call(serviceBase + "/checked/" + transfer, holder))
                .add("uncheckedStatus", call(serviceBase + "/unchecked/" + transfer, holder))
                .build();
        writes.put(transfer + "/" + holder, done);
    }

    private int update(String row, String holder, long fence, boolean checked) throws SQLException {
        String sql = checked ? "update it_fenced_account set holder = ?, fence = ? where id = ? and fence < ?"
                : "update it_fenced_account set holder = ?, fence = ? where id = ?";
        try (Connection c = otherSystem.getConnection(); PreparedStatement s = c.prepareStatement(sql)) {
            s.setString(1, holder);
            s.setLong(2, fence);
            s.setString(3, row);
            if (checked) {
                s.setLong(4, fence);
            }
            return s.executeUpdate();
        }
    }

    private static int call(String uri, String holder) {
        Client client = ClientBuilder.newClient().register(IdempotencyKeyFilter.class);
        try (Response r = client.target(uri).request().post(Entity.text(holder))) {
            return r.getStatus();
        } finally {
            client.close();
        }
    }

    String pausedKey(String transfer) {
        return pausedKeys.get(transfer);
    }

    void resume(String transfer) {
        resumes.get(transfer).countDown();
    }

    JsonObject writes(String transfer, String holder) {
        return writes.get(transfer + "/" + holder);
    }

    String holderOf(String row) throws SQLException {
        try (Connection c = otherSystem.getConnection();
             PreparedStatement s = c.prepareStatement("select holder from it_fenced_account where id = ?")) {
            s.setString(1, row);
            try (ResultSet r = s.executeQuery()) {
                return r.next() ? r.getString(1) : "missing";
            }
        }
    }
}
