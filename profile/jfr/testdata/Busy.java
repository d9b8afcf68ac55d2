import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

// Busy is the workload profdiff's JFR tests record: each argument starts one
// behaviour for about 1.5 s. compute spins on the CPU; contend has three
// threads take turns holding a synchronized block for 30 ms; sleep calls
// Thread.sleep(25); lock has two threads hold a ReentrantLock across a 30 ms
// sleep; park parks for 15 ms with no blocker; lambda allocates capturing
// lambdas (instances of a hidden class).
public class Busy {
    static final Object monitor = new Object();
    static final ReentrantLock lock = new ReentrantLock();
    static volatile long sink;
    static final long end = System.nanoTime() + 1_500_000_000L;

    public static void main(String[] args) throws Exception {
        Thread[] ts = new Thread[args.length * 3];
        int n = 0;
        for (String a : args) {
            int copies = a.equals("contend") || a.equals("lock") ? 3 : 1;
            for (int i = 0; i < copies; i++) {
                Thread t = new Thread(() -> run(a), "busy-" + a + "-" + i);
                t.start();
                ts[n++] = t;
            }
        }
        for (int i = 0; i < n; i++) {
            ts[i].join();
        }
    }

    static void run(String mode) {
        try {
            while (System.nanoTime() < end) {
                switch (mode) {
                    case "compute": compute(); break;
                    case "contend": contend(); break;
                    case "sleep": Thread.sleep(25); break;
                    case "lock": holdLock(); break;
                    case "park": LockSupport.parkNanos(15_000_000L); break;
                    case "lambda": lambdas(); break;
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
