// Starts Neo4j 5.26 Community embedded, with Bolt on 127.0.0.1:<port> and auth disabled,
// for codectx's contract tests. Prints "READY <port>" once Bolt accepts connections and
// runs until it is killed (SIGTERM shuts the database down cleanly).
//
// Usage: java [-Dcodectx.pagecache.mb=N] -cp 'lib/*:.' Neo4jTestServer <data dir> <bolt port>
// The page cache is 256 MiB unless codectx.pagecache.mb says otherwise (benchmarks that
// write a whole large repository size it to the store, as a production server is).

import java.nio.file.Path;
import java.time.Duration;
import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;

public final class Neo4jTestServer {
    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: Neo4jTestServer <data dir> <bolt port>");
            System.exit(2);
        }
        Path home = Path.of(args[0]).toAbsolutePath();
        int port = Integer.parseInt(args[1]);
        long pageCacheMb = Long.getLong("codectx.pagecache.mb", 256L);
        DatabaseManagementService service = new DatabaseManagementServiceBuilder(home)
                .setConfig(BoltConnector.enabled, true)
                .setConfig(BoltConnector.listen_address, new SocketAddress("127.0.0.1", port))
                .setConfig(BoltConnector.encryption_level, BoltConnector.EncryptionLevel.DISABLED)
                .setConfig(GraphDatabaseSettings.auth_enabled, false)
                .setConfig(GraphDatabaseSettings.pagecache_memory, pageCacheMb * 1024 * 1024)
                .setConfig(GraphDatabaseSettings.transaction_timeout, Duration.ofSeconds(60))
                .build();
        Runtime.getRuntime().addShutdownHook(new Thread(service::shutdown));
        service.database(GraphDatabaseSettings.DEFAULT_DATABASE_NAME).beginTx().close();
        System.out.println("READY " + port);
        System.out.flush();
        Thread.currentThread().join();
    }
}
