package dev.onceonly.it;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.OutputType;
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
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The demo page in a real headless Chromium (Debian's chromium and chromium-driver): publish an
 * order three times with the page's own form and watch the page show one processed order, two
 * duplicates and the stock taken once.
 */
class DemoPageIT {

    private static final String URL = "http://localhost:" + System.getProperty("http.port", "9080") + "/";
    private WebDriver browser;

    @BeforeEach
    void open() throws Exception {
        ChromeOptions options = new ChromeOptions();
        options.setBinary("/usr/bin/chromium");
        // Flags for a closed network and a root user: no sandbox, no background calls home.
        options.addArguments("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--user-data-dir=" + Files.createTempDirectory("demo-page-chromium"));
        ChromeDriverService service = new ChromeDriverService.Builder()
                .usingDriverExecutable(new File("/usr/bin/chromedriver")).build();
        browser = new ChromeDriver(service, options);
    }

    @AfterEach
    void close() {
        browser.quit();
    }

    @Test
    void publishingAnOrderThreeTimesShowsOneProcessedTwoDuplicatesAndStockTakenOnce() throws Exception {
        browser.get(URL);
        WebDriverWait wait = new WebDriverWait(browser, Duration.ofSeconds(60));
        wait.until(b -> !text("processed").isEmpty());
        long processed = number("processed");
        long duplicates = number("duplicateByClaimStore") + number("duplicateByLedger");

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

        Path shot = Path.of("target", "demo-page.png");
        Files.write(shot, ((TakesScreenshot) browser).getScreenshotAs(OutputType.BYTES));
    }

    private String text(String id) {
        return browser.findElement(By.id(id)).getText().trim();
    }

    private long number(String id) {
        return Long.parseLong(text(id));
    }
}
