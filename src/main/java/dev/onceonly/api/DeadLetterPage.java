package dev.onceonly.api;

import java.util.List;

/**
 * One page of a dead-letter queue's listing.
 *
 * @param letters  the dead letters of the page, in queue order (oldest first, as far as the broker keeps the order)
 * @param matching how many dead letters in the queue match the filter
 * @param inQueue  how many dead letters the queue held when it was read
 */
public record DeadLetterPage(List<DeadLetter> letters, int matching, int inQueue) {

    /**
     * Keeps a copy of {@code letters}.
     *
     * @param letters  the dead letters of the page
     * @param matching how many match the filter
     * @param inQueue  how many the queue held
     */
    public DeadLetterPage {
        letters = List.copyOf(letters);
    }
}
