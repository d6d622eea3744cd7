package dev.onceonly.ops;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A configuration a guide shows is the one a test server runs: a fenced block in {@code docs/*.md}
 * right after {@code <!-- the file PATH -->} must be that file of the build, character for
 * character. The guides whose set-up an integration test deploys must show it this way.
 */
class DocumentedFilesTest {

    private static final Pattern MARKED = Pattern.compile("<!-- the file (\\S+) -->\\n```\\w*\\n(.*?)```\\n", Pattern.DOTALL);

    @Test
    void everyMarkedBlockIsItsFile() throws IOException {
        Map<String, List<String>> shown = shown();
        assertTrue(shown.getOrDefault("docs/jms.md", List.of()).contains("src/test/liberty/itapp/configDropins/overrides/jms.xml"),
                "docs/jms.md shows the server configuration JmsGuardIT runs on: " + shown);
        assertTrue(shown.getOrDefault("docs/database-only.md", List.of()).containsAll(List.of(
                        "src/main/liberty/config/db/mariadb.xml", "src/main/liberty/config/db/postgresql.xml")),
                "docs/database-only.md shows the datasources the test servers run on: " + shown);
    }

    /** Per guide, the files it shows; fails on the first block that is not its file. */
    private static Map<String, List<String>> shown() throws IOException {
        Map<String, List<String>> shown = new TreeMap<>();
        try (Stream<Path> docs = Files.list(Path.of("docs"))) {
            for (Path doc : docs.filter(p -> p.toString().endsWith(".md")).toList()) {
                Matcher m = MARKED.matcher(Files.readString(doc));
                while (m.find()) {
                    String file = m.group(1);
                    assertEquals(Files.readString(Path.of(file)), m.group(2), doc + ": the block after <!-- the file " + file + " -->");
                    shown.computeIfAbsent(doc.toString().replace('\\', '/'), d -> new ArrayList<>()).add(file);
                }
            }
        }
        return shown;
    }
}
