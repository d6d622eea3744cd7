package dev.onceonly.bench;

import dev.onceonly.internal.redis.RedisClaimStore;
import dev.onceonly.internal.redis.RedisSettings;
import dev.onceonly.spi.ClaimState;
import dev.onceonly.spi.HolderResult;
import org.apache.camel.component.redis.processor.idempotent.SpringRedisStringIdempotentRepository;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.integration.redis.metadata.RedisMetadataStore;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.RedisClient;

/**
 * OnceOnly's claim and what users would pick instead, each behind one question: is this key new?
 * Every one is reached the way its users reach Redis (Spring Data Redis connection factories for
 * Spring Integration and Camel, a pooled Jedis client for OnceOnly and the two-command design), on
 * the same Redis, with keys of the same shape ({@code oo:orders:} + 22 characters). Retention is
 * 24 hours wherever the design has one.
 */
public enum Peer {

    /**
     * The floor, measured among the peers so that it sits minutes apart from them at most: a bare
     * {@code SET key value NX PX 30000} through a pooled Jedis client ({@link RedisRoundTripBenchmark#floorSetNxPx}).
     */
    FLOOR {
        @Override
        Client open(HostAndPort redis) {
            RedisClient client = RedisClient.create(redis);
            return new Client() {
                @Override
                public boolean firstTime(String key) {
                    return client.set(key, RedisRoundTripBenchmark.FLOOR_VALUE, RedisRoundTripBenchmark.NX_PX_LEASE) != null;
                }

                @Override
                public void close() {
                    client.close();
                }
            };
        }
    },

    /** {@link RedisClaimStore#claim}, the native {@code SET NX PX GET}: one round trip. */
    ONCEONLY {
        @Override
        Client open(HostAndPort redis) {
            return claimStore(new RedisClaimStore(RedisClient.create(redis), RedisSettings.NativeClaim.AUTO));
        }
    },
    /** {@link RedisClaimStore#claim} with {@code onceonly.redis.native-claim=off}: the Lua script. */
    ONCEONLY_SCRIPT {
        @Override
        Client open(HostAndPort redis) {
            return claimStore(new RedisClaimStore(RedisClient.create(redis), RedisSettings.NativeClaim.OFF));
        }
    },
    /**
     * Spring Integration's {@code RedisMetadataStore.putIfAbsent} on Jedis: {@code HSETNX} into one
     * hash ({@code MetaData}), and {@code HGET} when the field exists; the value is a timestamp, as
     * its idempotent receiver ({@code MetadataStoreSelector}) stores by default.
     */
    SPRING_INTEGRATION_JEDIS {
        @Override
        Client open(HostAndPort redis) {
            return metadataStore(jedis(redis));
        }
    },
    /** The same on a Lettuce connection factory (one shared connection, Spring Data's default). */
    SPRING_INTEGRATION_LETTUCE {
        @Override
        Client open(HostAndPort redis) {
            return metadataStore(lettuce(redis));
        }
    },
    /**
     * Apache Camel's {@code SpringRedisStringIdempotentRepository.add} on Jedis, expiry 24 h:
     * {@code SET processor:key key NX EX 86400}.
     */
    CAMEL_JEDIS {
        @Override
        Client open(HostAndPort redis) {
            JedisConnectionFactory factory = jedis(redis);
            StringRedisTemplate template = new StringRedisTemplate(factory);
            template.afterPropertiesSet();
            // The repository prefixes its processor name and ':', so "oo" + "orders:..." is the same key.
            SpringRedisStringIdempotentRepository repository = new SpringRedisStringIdempotentRepository(template, "oo");
            repository.setExpiry(RedisRoundTripBenchmark.RETENTION.toSeconds());
            repository.start();
            return new Client() {
                @Override
                public boolean firstTime(String key) {
                    return repository.add(key.substring("oo:".length()));
                }

                @Override
                public void close() {
                    repository.stop();
                    factory.destroy();
                }
            };
        }
    },
    /** The naive design: {@code SETNX key 1}, then {@code EXPIRE key 86400} if it was set. */
    SETNX_EXPIRE {
        @Override
        Client open(HostAndPort redis) {
            RedisClient client = RedisClient.create(redis);
            long seconds = RedisRoundTripBenchmark.RETENTION.toSeconds();
            return new Client() {
                @Override
                public boolean firstTime(String key) {
                    if (client.setnx(key, "1") == 1) {
                        client.expire(key, seconds);
                        return true;
                    }
                    return false;
                }

                @Override
                public void close() {
                    client.close();
                }
            };
        }
    };

    /** One peer's client, open for a trial. */
    interface Client extends AutoCloseable {

        /** {@return whether {@code key} was new (the message may be processed), recording it} */
        boolean firstTime(String key);

        /** Records {@code key} as a processed message, as a duplicate later finds it. */
        default void processed(String key) {
            if (!firstTime(key)) {
                throw new IllegalStateException("not a new key: " + key);
            }
        }

        @Override
        void close();
    }

    abstract Client open(HostAndPort redis);

    /** The claim; a processed message is claimed and completed, so its duplicate finds it done. */
    private static Client claimStore(RedisClaimStore store) {
        String token = RedisRoundTripBenchmark.TOKEN;
        return new Client() {
            @Override
            public boolean firstTime(String key) {
                return store.claim(key, token, "", RedisRoundTripBenchmark.LEASE).state() == ClaimState.ACQUIRED;
            }

            @Override
            public void processed(String key) {
                if (!firstTime(key) || store.complete(key, token, "", RedisRoundTripBenchmark.RETENTION) != HolderResult.APPLIED) {
                    throw new IllegalStateException("could not complete " + key);
                }
            }

            @Override
            public void close() {
                store.close();
            }
        };
    }

    private static <F extends RedisConnectionFactory & DisposableBean> Client metadataStore(F factory) {
        RedisMetadataStore store = new RedisMetadataStore(factory);
        return new Client() {
            @Override
            public boolean firstTime(String key) {
                return store.putIfAbsent(key, Long.toString(System.currentTimeMillis())) == null;
            }

            @Override
            public void close() {
                try {
                    factory.destroy();
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }
        };
    }

    private static JedisConnectionFactory jedis(HostAndPort redis) {
        JedisConnectionFactory factory = new JedisConnectionFactory(new RedisStandaloneConfiguration(redis.getHost(), redis.getPort()));
        factory.afterPropertiesSet();
        factory.start();
        return factory;
    }

    private static LettuceConnectionFactory lettuce(HostAndPort redis) {
        LettuceConnectionFactory factory = new LettuceConnectionFactory(new RedisStandaloneConfiguration(redis.getHost(), redis.getPort()));
        factory.afterPropertiesSet();
        factory.start();
        return factory;
    }
}
