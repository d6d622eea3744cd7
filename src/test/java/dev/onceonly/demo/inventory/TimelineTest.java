package dev.onceonly.demo.inventory;

import dev.onceonly.api.Outcome;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

class TimelineTest {

    @Test
    void eachCloseCountsWhatWasRecordedSinceTheLastOne() {
        Timeline timeline = new Timeline(60);
        timeline.outcome(Outcome.PROCESSED);
        timeline.outcome(Outcome.DUPLICATE);
        timeline.outcome(Outcome.DUPLICATE);
        timeline.close(100);
        timeline.outcome(Outcome.REJECTED);
        timeline.close(101);
        timeline.close(102);

        List<Timeline.Second> seconds = timeline.after(0);
        assertEquals(List.of(100L, 101L, 102L), seconds.stream().map(Timeline.Second::epochSecond).toList());
        assertEquals(1, seconds.get(0).outcomes()[Outcome.PROCESSED.ordinal()]);
        assertEquals(2, seconds.get(0).outcomes()[Outcome.DUPLICATE.ordinal()]);
        assertEquals(1, seconds.get(1).outcomes()[Outcome.REJECTED.ordinal()]);
        assertEquals(0, seconds.get(1).outcomes()[Outcome.DUPLICATE.ordinal()], "counted in its own second only");
        assertEquals(0, java.util.Arrays.stream(seconds.get(2).outcomes()).sum(), "a quiet second is there, with zeros");
    }

    @Test
    void percentilesAreInMicrosecondsAndAbsentWhenNothingWasMeasured() {
        Timeline timeline = new Timeline(60);
        for (int i = 1; i <= 100; i++) {
            timeline.call(i * 1_000_000L);   // 1 ms .. 100 ms
            timeline.guard(200_000);         // 200 µs
        }
        timeline.close(1);
        timeline.close(2);
        Timeline.Second busy = timeline.after(0).get(0);
        assertEquals(50_000, busy.callP50(), 50_000 * 0.01);
        assertEquals(99_000, busy.callP99(), 99_000 * 0.01);
        assertEquals(200, busy.guardP50(), 200 * 0.01);
        Timeline.Second quiet = timeline.after(1).get(0);
        assertNull(quiet.callP50());
        assertNull(quiet.guardP99());
        assertTrue(quiet.toJson().getJsonArray("callMicros").isNull(0));
    }

    @Test
    void onlyTheWindowIsKeptAndReadAfterASecond() {
        Timeline timeline = new Timeline(3);
        for (long s = 1; s <= 10; s++) {
            timeline.outcome(Outcome.PROCESSED);
            timeline.close(s);
        }
        assertEquals(List.of(8L, 9L, 10L), timeline.after(0).stream().map(Timeline.Second::epochSecond).toList());
        assertEquals(List.of(10L), timeline.after(9).stream().map(Timeline.Second::epochSecond).toList());
        assertEquals(1, timeline.after(9).get(0).toJson().getJsonObject("outcomes").getInt("PROCESSED"));
    }
}
