package dev.onceonly.itapp;

import dev.onceonly.api.IdempotentMessage;
import jakarta.annotation.PostConstruct;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.eclipse.microprofile.reactive.messaging.Incoming;
import redis.clients.jedis.RedisClient;

import java.net.URI;

/**
 * Guarded consumer whose effect outlives the server: it counts each body in a Redis hash, so the
 * test can check "exactly once" across a server restart.
 */
@ApplicationScoped
public class RestartConsumer {

    @Inject
    @ConfigProperty(name = "onceonly.redis.url", defaultValue = "redis://127.0.0.1:6379")
    String redisUrl;

    @Inject
    @ConfigProperty(name = "http.port", defaultValue = "9080")
    String port;

    private RedisClient redis;

    @PostConstruct
    void open() {
        redis = RedisClient.create(URI.create(redisUrl));
    }

    @PreDestroy
    void close() {
        redis.close();
    }

    @Incoming("it-restart")
    @IdempotentMessage(consumer = "it-restart")
    public void on(String body) throws InterruptedException {
        Thread.sleep(25); // slow enough that a stop finds messages in flight
        redis.hincrBy(effectsKey(port), body, 1);
    }

    /** The Redis hash of effects; the test computes the same name. */
    public static String effectsKey(String port) {
        return "oo-it:restart-effects:" + port;
    }
}
