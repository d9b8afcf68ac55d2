import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

// Busy is the workload profdiff's JFR tests record: each argument starts one
// behaviour for about 1.5 s. compute spins on the CPU; contend has three
// threads take turns holding a synchronized block for 30 ms; sleep calls
// Thread.sleep(25); lock has two threads hold a ReentrantLock across a 30 ms
// sleep; park parks for 15 ms with no blocker; lambda allocates capturing
// lambdas (instances of a hidden class); socket reads a loopback socket to
// which another thread writes a byte every 30 ms, so that each read blocks
// for about 30 ms; sleeps calls Thread.sleep(20) 120 times, once.
public class Busy {
    static final Object monitor = new Object();
    static final ReentrantLock lock = new ReentrantLock();
    static volatile long sink;
    static final long end = System.nanoTime() + 1_500_000_000L;

    // main starts the threads and returns: the JVM ends when they do. It
    // does not join them, whose wait would be one long jdk.JavaMonitorWait
    // of main in every recording.
    public static void main(String[] args) {
        for (String a : args) {
            int copies = a.equals("contend") || a.equals("lock") ? 3 : 1;
            for (int i = 0; i < copies; i++) {
                new Thread(() -> run(a), "busy-" + a + "-" + i).start();
            }
        }
    }

    static void run(String mode) {
        try {
            if (mode.equals("sleeps")) {
                for (int i = 0; i < 120; i++) {
                    Thread.sleep(20);
                }
                return;
            }
            while (System.nanoTime() < end) {
                switch (mode) {
                    case "compute": compute(); break;
                    case "contend": contend(); break;
                    case "sleep": Thread.sleep(25); break;
                    case "lock": holdLock(); break;
                    case "park": LockSupport.parkNanos(15_000_000L); break;
                    case "lambda": lambdas(); break;
                    case "socket": readSlowly(); break;
                    default: throw new IllegalArgumentException(mode);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    static void compute() {
        long x = sink;
        for (int i = 0; i < 1_000_000; i++) {
            x = x * 31 + i;
        }
        sink = x;
    }

    static volatile Object held;

    static void lambdas() {
        for (int i = 0; i < 100_000; i++) {
            final int x = i;
            java.util.function.IntSupplier s = () -> x + 1;
            held = s;
        }
    }

    static void readSlowly() throws InterruptedException {
        InetAddress lo = InetAddress.getLoopbackAddress();
        try (ServerSocket server = new ServerSocket(0, 1, lo)) {
            Thread writer = new Thread(() -> writeSlowly(server), "busy-socket-writer");
            writer.start();
            try (Socket s = new Socket(lo, server.getLocalPort())) {
                InputStream in = s.getInputStream();
                while (in.read() >= 0) {
                }
            }
            writer.join();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static void writeSlowly(ServerSocket server) {
        try (Socket s = server.accept()) {
            OutputStream out = s.getOutputStream();
            while (System.nanoTime() < end) {
                Thread.sleep(30);
                out.write(1);
                out.flush();
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    static void contend() throws InterruptedException {
        synchronized (monitor) {
            Thread.sleep(30);
        }
    }

    static void holdLock() throws InterruptedException {
        lock.lock();
        try {
            Thread.sleep(30);
        } finally {
            lock.unlock();
        }
    }
}
