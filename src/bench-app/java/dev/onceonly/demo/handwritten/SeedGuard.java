package dev.onceonly.demo.handwritten;

import dev.onceonly.rabbitmq.IncomingRabbitMetadata;
import jakarta.annotation.PostConstruct;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;
import jakarta.persistence.PersistenceContext;
import jakarta.transaction.Transactional;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.RedisClient;
import redis.clients.jedis.params.SetParams;

import java.net.URI;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * The seed article's idempotent consumer, written as it says: the key
 * {@code exchange:routingKey:sha256(body)}, {@code SET key "done" EX 30 NX} in Redis before the
 * work (a copy that finds the key is skipped), then, in the business transaction, an insert into a
 * table whose primary key is the message id (a copy that finds the row is skipped too). No lease, no
 * release on failure, no fencing, no CONFLICT: what OnceOnly adds is what this leaves out.
 */
@ApplicationScoped
public class SeedGuard {

    private static final SetParams DONE_FOR_30_SECONDS = SetParams.setParams().nx().ex(30);

    @PersistenceContext(unitName = "demo")
    EntityManager em;

    @Inject
    @ConfigProperty(name = "onceonly.redis.url", defaultValue = "redis://127.0.0.1:6379")
    String redisUrl;

    private RedisClient redis;

    @PostConstruct
    void open() {
        URI uri = URI.create(redisUrl);
        redis = RedisClient.builder().hostAndPort(new HostAndPort(uri.getHost(), uri.getPort())).build();
    }

    @PreDestroy
    void close() {
        redis.close();
    }

    /**
     * Whether the delivery is the first of its message: claimed in Redis, then recorded in the
     * business transaction (which must be active).
     */
    @Transactional(Transactional.TxType.MANDATORY)
    public boolean firstTime(IncomingRabbitMetadata delivery) {
        String key = delivery.exchange() + ":" + delivery.routingKey() + ":" + sha256(delivery.body());
        if (redis.set(key, "done", DONE_FOR_30_SECONDS) == null) {
            return false;
        }
        return em.createNativeQuery("INSERT INTO bench_seed_processed (msg_id) VALUES (?1) ON CONFLICT (msg_id) DO NOTHING")
                .setParameter(1, key).executeUpdate() == 1;
    }

    private static String sha256(byte[] body) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(body));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required by every Java platform", e);
        }
    }
}
