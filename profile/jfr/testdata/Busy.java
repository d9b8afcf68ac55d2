import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Path;
import java.text.ParseException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import jdk.jfr.Configuration;
import jdk.jfr.Recording;

// Busy is the workload profdiff's JFR tests record: each argument starts one
// behaviour for about 1.5 s (the system property busy.ms sets another
// window in milliseconds), and for at least 3 rounds however late a loaded
// machine lets its thread start, so that a short window is never empty.
// compute spins on the CPU; contend has three threads take turns holding a
// synchronized block for 30 ms; sleep calls Thread.sleep(25); lock has three
// threads take turns holding a ReentrantLock across a 30 ms sleep; park
// parks for 15 ms with no blocker; lambda allocates capturing lambdas
// (instances of a hidden class); socket reads a loopback socket to which
// another thread writes a byte every 30 ms, so that each read blocks for
// about 30 ms; sleeps calls Thread.sleep(20) 120 times, once.
//
// With the system property busy.rotate naming a file (and the modes sleep
// and contend), a second recording of the profile settings to that file
// starts once a thread has slept and threads have waited 20 ms or more to
// enter the contended block 3 times, which makes the JVM start a new chunk
// of any recording already running: its first chunk then has both kinds of
// events however slowly a loaded machine runs the program. The threads run
// on, past the window if need be, until that recording has started.
public class Busy {
    static final Object monitor = new Object();
    static final ReentrantLock lock = new ReentrantLock();
    static volatile long sink;
    static final long end = System.nanoTime() + Long.getLong("busy.ms", 1500) * 1_000_000L;
    static final int minRounds = 3;
    static final String rotateTo = System.getProperty("busy.rotate");
    static final AtomicBoolean rotated = new AtomicBoolean(rotateTo == null);
    static final AtomicInteger slept = new AtomicInteger();
    static final AtomicInteger waitedToEnter = new AtomicInteger();

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
            if (mode.equals("socket")) {
                readSlowly(); // until the writer stops at the window's end
                return;
            }
            for (int i = 0; i < minRounds || System.nanoTime() < end || !rotated.get(); i++) {
                switch (mode) {
                    case "compute": compute(); break;
                    case "contend": contend(); break;
                    case "sleep": Thread.sleep(25); slept.incrementAndGet(); break;
                    case "lock": holdLock(); break;
                    case "park": LockSupport.parkNanos(15_000_000L); break;
                    case "lambda": lambdas(); break;
                    default: throw new IllegalArgumentException(mode);
                }
                rotate();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    // rotate starts the busy.rotate recording once its events have happened.
    static void rotate() {
        if (slept.get() == 0 || waitedToEnter.get() < 3 || !rotated.compareAndSet(false, true)) {
            return;
        }
        try {
            Recording r = new Recording(Configuration.getConfiguration("profile"));
            r.setName("rotate");
            r.setDestination(Path.of(rotateTo));
            r.setDumpOnExit(true);
            r.start();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (ParseException e) {
            throw new IllegalStateException(e);
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
        long t0 = System.nanoTime();
        synchronized (monitor) {
            if (System.nanoTime() - t0 >= 20_000_000L) {
                waitedToEnter.incrementAndGet();
            }
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
