package dev.onceonly.it;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.StaleElementReferenceException;
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.WebDriverWait;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The demo page in a real headless Chromium (Debian's chromium and chromium-driver): publish an
 * order three times with the page's own form and watch the page, without a reload, show one
 * processed order, two duplicates, the stock taken once, the three decisions in the decision
 * stream and the charts moving on; publish a burst with duplicates (screenshot in
 * {@code target/demo-page.png}); and send a dead letter back to its queue from the page.
 */
class DemoPageIT {

    private static final String URL = "http://localhost:" + System.getProperty("http.port", "9080") + "/";
    private WebDriver browser;
    private WebDriverWait wait;

    @BeforeEach
    void open() throws Exception {
        ChromeOptions options = new ChromeOptions();
        options.setBinary("/usr/bin/chromium");
        // Flags for a closed network and a root user: no sandbox, no background calls home; a window
        // tall enough for the screenshot to hold the whole page.
        options.addArguments("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--window-size=1400,2400", "--user-data-dir=" + Files.createTempDirectory("demo-page-chromium"));
        ChromeDriverService service = new ChromeDriverService.Builder()
                .usingDriverExecutable(new File("/usr/bin/chromedriver")).build();
        browser = new ChromeDriver(service, options);
        // Rows come and go while the page updates: an element can go stale between finding and reading it.
        wait = new WebDriverWait(browser, Duration.ofSeconds(60));
        wait.ignoring(StaleElementReferenceException.class);
        browser.get(URL);
        wait.until(b -> !text("processed").isEmpty() && "live".equals(text("stream-status")));
    }

    @AfterEach
    void close() {
        browser.quit();
    }

    @Test
    void publishingAnOrderThreeTimesShowsOneProcessedTwoDuplicatesAndStockTakenOnce() throws Exception {
        long processed = number("processed");
        long duplicates = number("duplicateByClaimStore") + number("duplicateByLedger");
        long lastDecision = lastDecision();
        long lastSecond = lastSecond();

        String sku = "page-" + UUID.randomUUID().toString().substring(0, 8);
        WebElement skuField = browser.findElement(By.id("sku"));
        skuField.clear();
        skuField.sendKeys(sku);
        WebElement copies = browser.findElement(By.id("copies"));
        copies.clear();
        copies.sendKeys("3");
        browser.findElement(By.id("publish")).click();

        wait.until(b -> text("message").startsWith("Published order") && text("message").endsWith("3 times"));
        wait.until(b -> number("processed") == processed + 1
                && number("duplicateByClaimStore") + number("duplicateByLedger") == duplicates + 2);
        // The demo stocks a new SKU with demo.initial-stock (1000) and takes one unit, once.
        wait.until(b -> "999".equals(text("stock")));
        assertEquals(sku, text("stock-sku"));

        // Pushed, not reloaded: the order's three deliveries under one key digest, one processed
        // (on whichever attempt: the test server fails some first attempts on purpose).
        wait.until(b -> orderDecisions(lastDecision).values().stream()
                .anyMatch(outcomes -> outcomes.stream().filter("PROCESSED"::equals).count() == 1
                        && outcomes.stream().filter("DUPLICATE"::equals).count() == 2));
        // The charts move on by the second, and the window holds the order just processed.
        wait.until(b -> lastSecond() >= lastSecond + 2 && number("total-PROCESSED") >= 1);

        long before = number("processed");
        WebElement count = browser.findElement(By.id("burst-count"));
        count.clear();
        count.sendKeys("50");
        browser.findElement(By.id("publish-burst")).click();
        wait.until(b -> text("message").startsWith("Published a burst of 50 orders × 3 copies"));
        wait.until(b -> number("processed") >= before + 50);
        Path shot = Path.of("target", "demo-page.png");
        Files.write(shot, ((TakesScreenshot) browser).getScreenshotAs(OutputType.BYTES));
    }

    /**
     * An invalid order (quantity -3) fails once (its exception is not worth retrying) and shows up
     * in the dead-letter list, read from the queue with the library's dead-letter operations, with
     * the connector's reasons. Replay takes it off the list and sends it back to the orders
     * exchange; since the order is still invalid, the guard's decision on it is FAILED, and it comes
     * back to the list as a new dead letter with the same body digest, its replay counted: proof
     * that it really went through the queue and the consumer again.
     */
    @Test
    void aReplayedDeadLetterLeavesTheListAndReturnsAfterGoingThroughTheQueueAgain() {
        long deadLettered = number("deadLettered");
        browser.findElement(By.id("publish-invalid")).click();
        wait.until(b -> text("message").startsWith("Published an invalid order"));
        String digest = text("message").substring(text("message").lastIndexOf(' ') + 1);

        WebElement letter = wait.until(b -> deadLetter(digest, null));
        String id = letter.getAttribute("data-id");
        List<String> cells = letter.findElements(By.tagName("td")).stream().map(WebElement::getText).toList();
        assertEquals("FAILED", cells.get(4), "outcome");
        assertEquals("1", cells.get(5), "attempts: not retried");
        assertTrue(cells.get(6).contains("InvalidOrderException"), "reason: " + cells.get(6));
        assertTrue(cells.get(7).startsWith("inventory · key "), "consumer and key digest: " + cells.get(7));
        assertEquals("0", cells.get(8), "replays");
        assertFalse(letter.getText().contains("orderId"), "never the body or its key");
        wait.until(b -> number("deadLettered") >= deadLettered + 1);

        letter.findElement(By.className("replay")).click();
        wait.until(b -> text("message").startsWith("Replayed dead letter " + id.substring(0, 8) + ": FAILED"));
        assertTrue(browser.findElements(By.cssSelector("#dead-letters tr[data-id='" + id + "']")).isEmpty(), "off the list");

        WebElement again = wait.until(b -> deadLetter(digest, id));
        assertEquals("1", again.findElements(By.tagName("td")).get(8).getText(), "the replay counted");
    }

    /**
     * The page's Redis outage: the claim store suspended from the page (public ClaimStoreControl),
     * an order published three times meanwhile is processed once with both copies caught by the
     * ledger and none by the claim store; then the store is back in service by itself.
     */
    @Test
    void aSimulatedRedisOutageLeavesTheLedgerToCatchTheCopiesAndEndsByItself() {
        long processed = number("processed");
        long byStore = number("duplicateByClaimStore");
        long byLedger = number("duplicateByLedger");
        WebElement seconds = browser.findElement(By.id("outage-seconds"));
        seconds.clear();
        seconds.sendKeys("6");
        browser.findElement(By.id("claim-store-outage")).click();
        wait.until(b -> "true".equals(browser.findElement(By.id("outage-status")).getAttribute("data-suspended")));

        WebElement skuField = browser.findElement(By.id("sku"));
        skuField.clear();
        skuField.sendKeys("outage-" + UUID.randomUUID().toString().substring(0, 8));
        WebElement copies = browser.findElement(By.id("copies"));
        copies.clear();
        copies.sendKeys("3");
        browser.findElement(By.id("publish")).click();

        wait.until(b -> number("processed") == processed + 1 && number("duplicateByLedger") == byLedger + 2);
        assertEquals(byStore, number("duplicateByClaimStore"), "the suspended claim store caught nothing");
        wait.until(b -> "999".equals(text("stock")));
        wait.until(b -> "false".equals(browser.findElement(By.id("outage-status")).getAttribute("data-suspended")));
        assertEquals("Claim store in service.", text("outage-status"));
    }

    /** The dead-letter row of this body with another id than {@code other} (any, when {@code null}), or {@code null}. */
    private WebElement deadLetter(String digest, String other) {
        return browser.findElements(By.cssSelector("#dead-letters tbody tr[data-digest='" + digest + "']")).stream()
                .filter(r -> !r.getAttribute("data-id").equals(other)).findFirst().orElse(null);
    }

    /** Outcomes of the decisions numbered above {@code after}, by key digest. */
    private Map<String, List<String>> orderDecisions(long after) {
        Map<String, List<String>> byDigest = new HashMap<>();
        for (WebElement row : browser.findElements(By.cssSelector("#decisions tbody tr"))) {
            if (Long.parseLong(row.getAttribute("data-seq")) > after) {
                byDigest.computeIfAbsent(row.getAttribute("data-digest"), d -> new ArrayList<>()).add(row.getAttribute("data-outcome"));
            }
        }
        return byDigest;
    }

    private long lastDecision() {
        List<WebElement> rows = browser.findElements(By.cssSelector("#decisions tbody tr"));
        return rows.isEmpty() ? 0 : Long.parseLong(rows.get(0).getAttribute("data-seq"));
    }

    private long lastSecond() {
        String last = browser.findElement(By.id("outcomes-chart")).getAttribute("data-last");
        return last == null || last.isEmpty() ? 0 : Long.parseLong(last);
    }

    private String text(String id) {
        return browser.findElement(By.id(id)).getText().trim();
    }

    private long number(String id) {
        return Long.parseLong(text(id));
    }
}
