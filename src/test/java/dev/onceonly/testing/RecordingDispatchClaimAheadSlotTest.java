package dev.onceonly.testing;

import dev.onceonly.api.MessageView;
import dev.onceonly.contract.ClaimAheadSlotContract;
import dev.onceonly.spi.ClaimAheadSlot;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/** The engine's tests stand in for a connector with {@link RecordingDispatch}: it keeps the same contract. */
class RecordingDispatchClaimAheadSlotTest extends ClaimAheadSlotContract {

    private final List<RecordingDispatch> received = new ArrayList<>();

    @Override
    protected List<ClaimAheadSlot> receive(int n) {
        List<RecordingDispatch> fresh = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            byte[] body = ("m" + received.size()).getBytes(StandardCharsets.UTF_8);
            RecordingDispatch d = new RecordingDispatch(MessageView.of("", "q", null, null, body));
            received.add(d);
            fresh.add(d);
        }
        for (int i = 0; i < n; i++) {
            fresh.get(i).offerBehind(fresh.subList(i + 1, n).toArray(RecordingDispatch[]::new));
        }
        return fresh.stream().map(RecordingDispatch::claimAhead).toList();
    }

    @Override
    protected void settle(ClaimAheadSlot slot) {
        ((RecordingDispatch) slot).settle();
    }
}
