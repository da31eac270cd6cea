package dev.graphmem.neo4j;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.connectors.HttpConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;
import org.neo4j.io.ByteUnit;

/**
 * Starts an embedded Neo4j DBMS with the Bolt connector on 127.0.0.1 and waits until SIGTERM
 * (or SIGINT), then shuts the DBMS down cleanly so no committed transaction is lost.
 *
 * <p>Settings come from the environment: NEO4J_HOME_DIR (data directory, default ./neo4j-data),
 * NEO4J_BOLT_PORT (default 7687), NEO4J_PASSWORD (the password of user "neo4j"; auth is off when
 * it is empty), NEO4J_PAGECACHE_MB (default 512). The JVM heap is set by the caller (-Xmx).
 */
public final class Server {
    private Server() {}

    public static void main(String[] args) throws Exception {
        Path home = Path.of(env("NEO4J_HOME_DIR", "neo4j-data")).toAbsolutePath();
        int port = Integer.parseInt(env("NEO4J_BOLT_PORT", "7687"));
        String password = env("NEO4J_PASSWORD", "");
        long pageCacheMb = Long.parseLong(env("NEO4J_PAGECACHE_MB", "512"));
        Files.createDirectories(home);

        DatabaseManagementService dbms = new DatabaseManagementServiceBuilder(home)
                .setConfig(BoltConnector.enabled, true)
                .setConfig(BoltConnector.listen_address, new SocketAddress("127.0.0.1", port))
                .setConfig(BoltConnector.advertised_address, new SocketAddress("127.0.0.1", port))
                .setConfig(HttpConnector.enabled, false)
                .setConfig(GraphDatabaseSettings.auth_enabled, !password.isEmpty())
                .setConfig(GraphDatabaseSettings.pagecache_memory, ByteUnit.mebiBytes(pageCacheMb))
                .build();

        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            System.out.println("neo4j-server: shutting down");
            dbms.shutdown();
            stopped.countDown();
        }, "neo4j-shutdown"));

        try {
            if (!password.isEmpty()) {
                setPassword(dbms, password);
            }
        } catch (RuntimeException e) {
            System.err.println("neo4j-server: could not set the password: " + e.getMessage());
            System.exit(1); // runs the shutdown hook
        }
        System.out.println("neo4j-server: ready on bolt://127.0.0.1:" + port + " (data " + home + ")");
        System.out.flush();
        stopped.await();
    }

    /** Embedded transactions run with full rights, so the system database takes the password
     *  directly and no first-login password change is asked of clients. Idempotent. */
    private static void setPassword(DatabaseManagementService dbms, String password) {
        try {
            dbms.database(GraphDatabaseSettings.SYSTEM_DATABASE_NAME).executeTransactionally(
                    "ALTER USER neo4j SET PASSWORD $password CHANGE NOT REQUIRED",
                    Map.of("password", password));
        } catch (RuntimeException e) {
            // a restart with the same password: nothing to change
            if (!String.valueOf(e.getMessage()).contains("cannot be the same")) {
                throw e;
            }
        }
    }

    private static String env(String name, String fallback) {
        String value = System.getenv(name);
        return value == null || value.isBlank() ? fallback : value;
    }
}
