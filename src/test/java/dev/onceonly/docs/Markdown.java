package dev.onceonly.docs;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** A Markdown document as far as its checks need it: code blocks, links, and the anchors its headings make. */
final class Markdown {

    private static final Pattern FENCE = Pattern.compile("^(\\s*)(```|~~~)\\s*([\\w+-]*)\\s*$");
    private static final Pattern INLINE_CODE = Pattern.compile("(`+).*?\\1");
    private static final Pattern LINK = Pattern.compile("\\]\\(\\s*<?([^)\\s>]+)>?(?:\\s+\"[^\"]*\")?\\s*\\)");
    private static final Pattern REFERENCE = Pattern.compile("^\\s*\\[[^\\]]+\\]:\\s*(\\S+)");
    private static final Pattern HEADING = Pattern.compile("^#{1,6}\\s+(.*?)\\s*#*\\s*$");
    private static final Pattern HTML_ANCHOR = Pattern.compile("<a\\s+(?:id|name)=\"([^\"]+)\"");
    private static final String FRAGMENT = "<!-- fragment -->";

    private final Path path;
    private final List<String> lines;

    private Markdown(Path path, List<String> lines) {
        this.path = path;
        this.lines = lines;
    }

    static Markdown read(Path path) {
        return new Markdown(path, DocumentationTest.readString(path).lines().toList());
    }

    /** Every {@code ```java} block, its indentation removed. */
    List<JavaBlock> javaBlocks() {
        List<JavaBlock> blocks = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            Matcher open = FENCE.matcher(lines.get(i));
            if (!open.matches()) {
                continue;
            }
            int end = closing(i, open.group(2));
            if (open.group(3).equals("java")) {
                String indent = open.group(1);
                StringBuilder code = new StringBuilder();
                for (String l : lines.subList(i + 1, end)) {
                    code.append(l.startsWith(indent) ? l.substring(indent.length()) : l.strip()).append('\n');
                }
                blocks.add(new JavaBlock(path, i + 2, code.toString(), FRAGMENT.equals(previousText(i))));
            }
            i = end;
        }
        return blocks;
    }

    /** Each relative link whose file or anchor does not exist, with its line. */
    List<String> brokenLinks() {
        List<String> broken = new ArrayList<>();
        forEachProse((line, text) -> {
            List<String> targets = new ArrayList<>();
            Matcher link = LINK.matcher(INLINE_CODE.matcher(text).replaceAll(""));
            while (link.find()) {
                targets.add(link.group(1));
            }
            Matcher ref = REFERENCE.matcher(text);
            if (ref.find()) {
                targets.add(ref.group(1));
            }
            for (String target : targets) {
                String problem = problem(target);
                if (problem != null) {
                    broken.add("line " + line + ": " + target + " (" + problem + ")");
                }
            }
        });
        return broken;
    }

    /** Why {@code target} does not resolve from this document, or null when it does. */
    private String problem(String target) {
        if (target.matches("^[a-zA-Z][a-zA-Z0-9+.-]*:.*")) {
            return null; // http:, https:, mailto: - not checked here
        }
        int hash = target.indexOf('#');
        String file = hash < 0 ? target : target.substring(0, hash);
        String anchor = hash < 0 ? null : target.substring(hash + 1);
        Path resolved = file.isEmpty() ? path : resolve(file);
        if (!Files.exists(resolved)) {
            return "no such file";
        }
        if (anchor == null) {
            return null;
        }
        if (!resolved.toString().endsWith(".md")) {
            return "an anchor into a file that is not Markdown";
        }
        return read(resolved).anchors().contains(anchor) ? null : "no such heading";
    }

    private Path resolve(String file) {
        Path dir = path.toAbsolutePath().getParent();
        return dir.resolve(file).normalize();
    }

    /** The anchors GitHub gives the headings (and explicit {@code <a id>}s) of this document. */
    Set<String> anchors() {
        Set<String> anchors = new HashSet<>();
        Map<String, Integer> seen = new HashMap<>();
        forEachProse((line, text) -> {
            Matcher a = HTML_ANCHOR.matcher(text);
            while (a.find()) {
                anchors.add(a.group(1));
            }
            Matcher h = HEADING.matcher(text);
            if (h.matches()) {
                String slug = slug(h.group(1));
                int n = seen.merge(slug, 1, Integer::sum) - 1;
                anchors.add(n == 0 ? slug : slug + "-" + n);
            }
        });
        return anchors;
    }

    /** GitHub's anchor for a heading: the rendered text in lower case, punctuation dropped, each space a hyphen. */
    static String slug(String heading) {
        String text = heading.replaceAll("\\[([^\\]]*)\\]\\([^)]*\\)", "$1").replace("`", "").replace("*", "");
        return text.toLowerCase(Locale.ROOT).replaceAll("[^\\p{L}\\p{N}\\p{M}\\p{Pc} -]", "").replace(' ', '-');
    }

    private interface LineVisitor {
        void visit(int line, String text);
    }

    /** Calls {@code visitor} with every line outside code blocks (1-based line numbers). */
    private void forEachProse(LineVisitor visitor) {
        for (int i = 0; i < lines.size(); i++) {
            Matcher open = FENCE.matcher(lines.get(i));
            if (open.matches()) {
                i = closing(i, open.group(2));
            } else {
                visitor.visit(i + 1, lines.get(i));
            }
        }
    }

    /** The index of the fence closing the block opened at {@code open} (or the last line). */
    private int closing(int open, String fence) {
        for (int j = open + 1; j < lines.size(); j++) {
            if (lines.get(j).strip().equals(fence)) {
                return j;
            }
        }
        return lines.size() - 1;
    }

    private String previousText(int index) {
        for (int j = index - 1; j >= 0; j--) {
            if (!lines.get(j).isBlank()) {
                return lines.get(j).strip();
            }
        }
        return "";
    }
}
