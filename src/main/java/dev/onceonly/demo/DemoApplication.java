package dev.onceonly.demo;

import jakarta.ws.rs.ApplicationPath;
import jakarta.ws.rs.core.Application;

/** REST endpoints of the demo live under {@code /api}. */
@ApplicationPath("/api")
public class DemoApplication extends Application {
}
