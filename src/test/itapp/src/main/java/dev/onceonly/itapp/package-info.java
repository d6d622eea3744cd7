/**
 * The integration tests' own application: consumers and a REST resource that the tests in
 * {@code src/test/java/dev/onceonly/it} drive through a real broker. Built from
 * {@code src/test/itapp} against the installed {@code dev.onceonly:onceonly} artifact only, like any
 * application using the library, and deployed beside the demo on the {@code onceonly-it} server
 * (context root {@code /itapp}). Uses the library's public API only.
 */
package dev.onceonly.itapp;
