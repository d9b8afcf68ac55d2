import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;

// Turns is the program recorded with async-profiler for testdata/ap*.jfr
// (see README.md): each argument starts threads that run for turns.ms
// (default 1500) milliseconds.
//
//	compute  one thread computing, never blocked
//	monitor  four threads taking turns on one synchronized block, each
//	         computing about 5 ms inside it: three of them are blocked
//	         entering it at any time
//	park     three threads taking turns on one ReentrantLock the same way
//	alloc    one thread allocating arrays of 1 KiB to 64 KiB
public class Turns {
    static volatile long sink;
    static final Object monitor = new Object();
    static final ReentrantLock lock = new ReentrantLock();

    public static void main(String[] args) throws InterruptedException {
        long end = System.nanoTime() + Long.getLong("turns.ms", 1500) * 1_000_000L;
        List<Thread> threads = new ArrayList<>();
        for (String mode : args) {
            switch (mode) {
                case "compute":
                    threads.add(new Thread(() -> compute(end), "compute"));
                    break;
                case "monitor":
                    for (int i = 0; i < 4; i++) {
                        threads.add(new Thread(() -> monitorTurns(end), "monitor-" + i));
                    }
                    break;
                case "park":
                    for (int i = 0; i < 3; i++) {
                        threads.add(new Thread(() -> parkTurns(end), "park-" + i));
                    }
                    break;
                case "alloc":
                    threads.add(new Thread(() -> allocate(end), "alloc"));
                    break;
                default:
                    throw new IllegalArgumentException("unknown mode " + mode);
            }
        }
        for (Thread t : threads) {
            t.start();
        }
        for (Thread t : threads) {
            t.join();
        }
    }

    // spin computes for about the given nanoseconds.
    static long spin(long nanos) {
        long until = System.nanoTime() + nanos;
        long x = 0;
        while (System.nanoTime() < until) {
            for (int i = 0; i < 1000; i++) {
                x = x * 31 + i;
            }
        }
        return x;
    }

    static void compute(long end) {
        while (System.nanoTime() < end) {
            sink += spin(1_000_000);
        }
    }

    static void monitorTurns(long end) {
        while (System.nanoTime() < end) {
            synchronized (monitor) {
                sink += spin(5_000_000);
            }
        }
    }

    static void parkTurns(long end) {
        while (System.nanoTime() < end) {
            lock.lock();
            try {
                sink += spin(5_000_000);
            } finally {
                lock.unlock();
            }
        }
    }

    static void allocate(long end) {
        List<byte[]> keep = new ArrayList<>();
        int n = 0;
        while (System.nanoTime() < end) {
            byte[] b = new byte[1024 * (1 + n++ % 64)];
            keep.add(b);
            if (keep.size() > 256) {
                keep.clear();
            }
            sink += b.length;
        }
    }
}
