package dev.onceonly.internal.redis;

import dev.onceonly.spi.BatchClaimStore;
import dev.onceonly.spi.ClaimResult;
import dev.onceonly.spi.BatchClaimStore.Answers;
import dev.onceonly.spi.BatchClaimStore.ClaimRequest;
import dev.onceonly.spi.BatchClaimStore.CompleteRequest;
import dev.onceonly.spi.HolderResult;
import redis.clients.jedis.Pipeline;
import redis.clients.jedis.Response;
import redis.clients.jedis.exceptions.JedisDataException;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Function;
import java.util.function.UnaryOperator;

/**
 * The Redis store's batches, pipelined on one connection to the master (standalone, Sentinel): the
 * same commands as the single calls of {@link ClaimProtocol}, one round trip for up to
 * {@link #MAX_ROUND} keys, with {@code completeAll}'s one {@code WAIT} after the last completion;
 * {@link #completeThenClaim} sends its completions ahead of its claims in one such round trip (not
 * with {@code WAIT}: see {@link #completesWithClaims}).
 *
 * <p>Each reply is read as the single call reads it. A key whose command Redis refused (NOSCRIPT,
 * the native claim refused, anything else) is sent again on its own as the single call's attempt
 * would be; a round whose connection was lost is sent again whole, as the single calls are.
 *
 * <p>Contract: only for a connection that {@link RedisConnection#pipelinesBatches()}; the caller
 * sends batches as single calls elsewhere (a cluster, a client that is neither a
 * {@code RedisClient} nor a {@code RedisSentinelClient}). Answers as {@code BatchClaimStore}'s
 * {@code claimAll}, {@code completeAll} and {@code completeThenClaim}.
 */
final class ClaimBatches {

    /** Commands one round trip of a batch carries at most; a longer batch takes several. */
    static final int MAX_ROUND = 256;
    /** The replicas array of a round without completions. */
    private static final int[] NO_REPLICAS = new int[0];

    private final RedisConnection connection;
    private final RedisCalls calls;
    private final ReplicaWait wait;
    private final ClaimProtocol protocol;

    ClaimBatches(RedisConnection connection, RedisCalls calls, ReplicaWait wait, ClaimProtocol protocol) {
        this.connection = connection;
        this.calls = calls;
        this.wait = wait;
        this.protocol = protocol;
    }

    /** One pipelined round trip of the claims' commands per {@link #MAX_ROUND} keys. */
    List<ClaimResult> claimAll(List<ClaimRequest> requests) {
        List<ClaimResult> results = new ArrayList<>(requests.size());
        for (List<ClaimRequest> round : rounds(requests, ClaimRequest::key)) {
            // A round whose connection was lost is sent again whole (see RedisCalls.call): every claim
            // of the first attempt that took its key is recognised by its own token, as claim does.
            List<Object> found = calls.call("claim", UnaryOperator.identity(), () -> round(List.of(), round, NO_REPLICAS));
            for (int i = 0; i < round.size(); i++) {
                results.add(protocol.claimed(found.get(i), round.get(i).token()));
            }
        }
        return results;
    }

    /**
     * One pipelined round trip of the completion scripts per {@link #MAX_ROUND} keys, with
     * {@code waitReplicas > 0} ONE {@code WAIT} after the last of them on the same connection, which
     * counts the replicas that acknowledged every write before it. Completions the replicas did not
     * confirm are counted and logged as a single completion's are.
     */
    List<HolderResult> completeAll(List<CompleteRequest> requests) {
        List<HolderResult> results = new ArrayList<>(requests.size());
        for (List<CompleteRequest> round : rounds(requests, CompleteRequest::key)) {
            List<String[]> args = completeArgs(round);
            int[] replicas = new int[round.size()];
            // A round whose connection was lost is sent again whole (see RedisCalls.call); a key the
            // retry finds done with its own done value was completed by the first attempt (see
            // ClaimProtocol.ownCompletion).
            List<Object> replies = calls.call("complete", retried -> ownCompletions(retried, args),
                    () -> round(args, List.of(), replicas));
            for (int i = 0; i < round.size(); i++) {
                results.add(protocol.completion(replies.get(i), replicas[i]).result());
            }
        }
        return results;
    }

    /**
     * {@return whether {@link #completeThenClaim} takes these requests: pipelined batches with
     * {@code waitReplicas = 0}, both lists non-empty, within one round ({@link #MAX_ROUND}) and no key
     * twice; else the caller does {@code completeAll}, then {@code claimAll}}
     */
    boolean takesInOneRound(List<CompleteRequest> completions, List<ClaimRequest> claims) {
        return completesWithClaims() && !completions.isEmpty() && !claims.isEmpty()
                && completions.size() + claims.size() <= MAX_ROUND && distinctKeys(completions, claims);
    }

    /** One pipelined round trip, the completion scripts first; only for requests {@link #takesInOneRound}. */
    Answers completeThenClaim(List<CompleteRequest> completions, List<ClaimRequest> claims) {
        List<String[]> args = completeArgs(completions);
        // Lost connection: sent again whole, read as completeAll's and claimAll's retries are.
        List<Object> replies = calls.call("claim", retried -> ownCompletions(retried, args),
                () -> round(args, claims, new int[args.size()]));
        List<HolderResult> completed = new ArrayList<>(args.size());
        for (int i = 0; i < args.size(); i++) {
            completed.add(ClaimProtocol.holder(replies.get(i)));
        }
        List<ClaimResult> claimed = new ArrayList<>(claims.size());
        for (int i = 0; i < claims.size(); i++) {
            claimed.add(protocol.claimed(replies.get(args.size() + i), claims.get(i).token()));
        }
        return new Answers(completed, claimed);
    }

    /** Pipelined batches, and no WAIT: WAIT after the completions would hold the claims' replies until the replicas answer. */
    boolean completesWithClaims() {
        return connection.pipelinesBatches() && !wait.enabled();
    }

    private static List<String[]> completeArgs(List<CompleteRequest> requests) {
        List<String[]> args = new ArrayList<>(requests.size());
        for (CompleteRequest r : requests) {
            args.add(ClaimProtocol.completeArgs(r.key(), r.token(), r.fingerprint(), r.retention()));
        }
        return args;
    }

    /** Compared pairwise, without a set: this runs before every claim that carries marks, and both lists are short. */
    private static boolean distinctKeys(List<CompleteRequest> completions, List<ClaimRequest> claims) {
        int n = completions.size() + claims.size();
        for (int i = 0; i < n; i++) {
            String key = i < completions.size() ? completions.get(i).key() : claims.get(i - completions.size()).key();
            for (int j = i + 1; j < n; j++) {
                String other = j < completions.size() ? completions.get(j).key() : claims.get(j - completions.size()).key();
                if (key.equals(other)) {
                    return false;
                }
            }
        }
        return true;
    }

    /**
     * One attempt of a round, pipelined: the completion scripts, WAIT after them when configured,
     * then the claims. The replies in that order: each script's, then the value each claim found
     * (null where it took the key). Callers put no key twice in a round (see {@link #rounds}).
     *
     * @param replicas receives for each completion WAIT's answer when its script changed the key, else -1
     */
    private List<Object> round(List<String[]> completions, List<ClaimRequest> claims, int[] replicas) {
        boolean byScript = !protocol.nativeClaim();
        List<Response<?>> sent = new ArrayList<>(completions.size() + claims.size());
        Response<Long> acknowledgement = null;
        try (Pipeline p = connection.pipeline()) {
            for (String[] keyAndArgs : completions) {
                sent.add(p.evalsha(ClaimScripts.COMPLETE_SCRIPT.sha(), 1, keyAndArgs));
            }
            if (wait.enabled() && !completions.isEmpty()) {
                acknowledgement = wait.send(p);
            }
            for (ClaimRequest r : claims) {
                sent.add(protocol.sendClaim(p, r, byScript));
            }
            p.sync();
        }
        int acknowledged = acknowledgement == null ? -1 : ReplicaWait.acknowledged(acknowledgement);
        List<Object> replies = new ArrayList<>(sent.size());
        for (int i = 0; i < completions.size(); i++) {
            try {
                Object reply = sent.get(i).get();
                replicas[i] = ClaimScripts.isApplied(reply) ? acknowledged : -1;
                replies.add(reply);
            } catch (JedisDataException e) {
                // Redis refused this one script (NOSCRIPT, ...) and wrote nothing for it: it is
                // attempted again on its own, as complete's attempt does it (by source, with its own
                // WAIT), and what Redis refuses then fails the batch as it fails a completion. No
                // other request of the round has this key, so this later attempt overtakes none.
                int[] own = {-1};
                replies.add(protocol.completeOnce(completions.get(i), own));
                replicas[i] = own[0];
            }
        }
        for (int i = 0; i < claims.size(); i++) {
            try {
                replies.add(sent.get(completions.size() + i).get());
            } catch (JedisDataException e) {
                // Likewise for a claim (by source, by script; NX with GET refused before 7.0).
                replies.add(protocol.claimAgain(claims.get(i), e, byScript));
            }
        }
        return replies;
    }

    /** The replies of a retried round whose first replies are those of {@code args}' completions (see {@link ClaimProtocol#ownCompletion}). */
    private List<Object> ownCompletions(List<Object> retried, List<String[]> args) {
        List<Object> replies = new ArrayList<>(retried);
        for (int i = 0; i < args.size(); i++) {
            replies.set(i, protocol.ownCompletion(retried.get(i), args.get(i)));
        }
        return replies;
    }

    /**
     * A batch cut into round trips of at most {@link #MAX_ROUND} requests with no key twice in one
     * round: a key's next request goes in the next round, after the first has its answer. So a key
     * requested twice is decided in request order even when one of its commands is sent again on its
     * own after its round (a refused command, see {@link #round}).
     */
    private static <R> List<List<R>> rounds(List<R> requests, Function<R, String> key) {
        List<List<R>> rounds = new ArrayList<>();
        Set<String> keys = new HashSet<>();
        int from = 0;
        for (int i = 0; i < requests.size(); i++) {
            String k = key.apply(requests.get(i));
            if (i - from == MAX_ROUND || !keys.add(k)) {
                rounds.add(requests.subList(from, i));
                keys.clear();
                keys.add(k);
                from = i;
            }
        }
        if (from < requests.size()) {
            rounds.add(requests.subList(from, requests.size()));
        }
        return rounds;
    }
}
