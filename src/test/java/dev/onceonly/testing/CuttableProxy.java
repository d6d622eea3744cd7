package dev.onceonly.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A TCP proxy on loopback in front of a server, that can be cut: while cut, every open connection
 * is closed and new ones are closed as soon as they are accepted, as when the server is down; then
 * it is restored. The server itself (the machine's RabbitMQ, which other tests use) is not touched.
 */
public final class CuttableProxy implements AutoCloseable {

    private final ServerSocket listener;
    private final int targetPort;
    private final List<Socket> open = new CopyOnWriteArrayList<>();
    private volatile boolean cut;

    public CuttableProxy(int targetPort) throws IOException {
        this.targetPort = targetPort;
        this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread acceptor = new Thread(this::accept, "cuttable-proxy");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    public int port() {
        return listener.getLocalPort();
    }

    /** Closes every connection and refuses new ones until {@link #restore()}. */
    public void cut() {
        cut = true;
        open.forEach(CuttableProxy::closeQuietly);
        open.clear();
    }

    public void restore() {
        cut = false;
    }

    private void accept() {
        while (!listener.isClosed()) {
            try {
                Socket client = listener.accept();
                if (cut) {
                    closeQuietly(client);
                    continue;
                }
                Socket server = new Socket(InetAddress.getLoopbackAddress(), targetPort);
                open.add(client);
                open.add(server);
                pipe(client, server);
                pipe(server, client);
            } catch (IOException e) {
                // closed, or the server refused: the client sees its connection end
            }
        }
    }

    private void pipe(Socket from, Socket to) {
        Thread t = new Thread(() -> {
            byte[] buffer = new byte[16 * 1024];
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                for (int n; (n = in.read(buffer)) >= 0; ) {
                    out.write(buffer, 0, n);
                    out.flush();
                }
            } catch (IOException e) {
                // either side closed
            } finally {
                closeQuietly(from);
                closeQuietly(to);
            }
        }, "cuttable-proxy-pipe");
        t.setDaemon(true);
        t.start();
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException e) {
            // already closed
        }
    }

    @Override
    public void close() throws IOException {
        cut();
        listener.close();
    }
}
