package dev.onceonly.docs;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One {@code ```java} block of a document: its text, the document line its first line is on, and
 * whether it is marked a fragment (class members, wrapped in a class to compile).
 */
record JavaBlock(Path document, int firstLine, String code, boolean fragment) {

    private static final Pattern PUBLIC_TYPE = Pattern.compile(
            "^public\\s+(?:(?:abstract|final|sealed|non-sealed|static)\\s+)*(?:class|interface|enum|record|@interface)\\s+(\\w+)",
            Pattern.MULTILINE);
    private static final Pattern NOT_PUBLIC_API = Pattern.compile("dev\\.onceonly\\.(internal|demo)\\b");

    /** The name its file must have: its public type's, or any when it has none. */
    String publicTypeName() {
        Matcher m = PUBLIC_TYPE.matcher(code);
        return !fragment && m.find() ? m.group(1) : "Block";
    }

    /**
     * The block as javac reads it, line for line: its own package declaration (if any) blanked and
     * {@code pkg} declared on its first line; a fragment's members wrapped in a class that opens on
     * the first line after its imports.
     */
    String compilationUnit(String pkg) {
        List<String> lines = new ArrayList<>(code.lines().map(l -> l.startsWith("package ") ? "" : l).toList());
        if (fragment) {
            int body = 0;
            for (int i = 0; i < lines.size(); i++) {
                String l = lines.get(i).strip();
                if (l.startsWith("import ")) {
                    body = i + 1;
                }
            }
            if (body == lines.size()) {
                lines.add("");
            }
            lines.set(body, "abstract class Block { " + lines.get(body));
            lines.add("}");
        }
        lines.set(0, "package " + pkg + "; " + lines.get(0));
        return String.join("\n", lines) + "\n";
    }

    /** The document line of the unit's line {@code unitLine} (1-based). */
    long documentLine(long unitLine) {
        return firstLine + unitLine - 1;
    }

    /** Uses of what is not public API, with their document lines: an example shows only what a user may use. */
    List<String> publicApiViolations() {
        List<String> found = new ArrayList<>();
        List<String> lines = code.lines().toList();
        for (int i = 0; i < lines.size(); i++) {
            if (NOT_PUBLIC_API.matcher(lines.get(i)).find()) {
                found.add("line " + (firstLine + i) + ": not public API: " + lines.get(i).strip());
            }
        }
        return found;
    }
}
