package dev.onceonly.http;

import dev.onceonly.api.DeadLetter;
import dev.onceonly.api.ReplayResult;
import jakarta.json.Json;
import jakarta.json.JsonArrayBuilder;
import jakarta.json.JsonObject;
import jakarta.json.JsonObjectBuilder;

import java.time.Instant;
import java.util.List;

/** What {@link DeadLetterResource} answers with: dead letters and replay results as JSON, never a body or a key. */
final class DeadLetterJson {

    private DeadLetterJson() {
    }

    static JsonArrayBuilder letters(List<DeadLetter> letters) {
        JsonArrayBuilder a = Json.createArrayBuilder();
        letters.forEach(l -> a.add(of(l)));
        return a;
    }

    /** What the resource shows of a dead letter: everything but its body. */
    static JsonObject of(DeadLetter l) {
        JsonObjectBuilder b = Json.createObjectBuilder().add("id", l.id()).add("channel", l.channel())
                .add("outcome", l.outcome()).add("reason", l.reason()).add("attempts", l.attempts())
                .add("consumer", l.consumer()).add("keyDigest", l.keyDigest()).add("bodySha256", l.bodySha256())
                .add("bodyBytes", l.bodyBytes()).add("replays", l.replays()).add("replayable", l.replayable());
        Instant at = l.deadLetteredAt();
        if (at != null) {
            b.add("deadLetteredAt", at.toString());
        }
        return b.build();
    }

    static JsonObject of(ReplayResult r) {
        return Json.createObjectBuilder().add("id", r.id()).add("status", r.status().name()).add("detail", r.detail())
                .build();
    }
}
