import java.util.ArrayList;
import java.util.List;
import jdk.jfr.DataAmount;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.MemoryAddress;
import jdk.jfr.Name;
import jdk.jfr.Timespan;
import jdk.jfr.Timestamp;
import jdk.jfr.Unsigned;

// Shapes is the workload profdiff's tests record to read async-profiler's
// event types: async-profiler cannot be installed where the tests run, so
// this program declares JFR events with the JDK's own jdk.jfr API, named and
// with the fields async-profiler's src/jfrMetadata.cpp gives them, and
// commits them the way async-profiler would, from the threads they describe.
// The JVM writes the recording, so the events also carry the JDK's own
// duration, eventThread and stackTrace fields, and the state is a string
// rather than a ThreadState pool entry.
//
// For about 1.2 s: "shapes-sleeper" sleeps 20 ms at a time and commits a
// sleeping wall-clock sample batching 2 samples after each sleep;
// "shapes-runner" computes and commits a running wall-clock sample after each
// slice of work; "shapes-allocator" allocates small objects and 2 MiB arrays
// (outside any TLAB), commits a live-object and a malloc event for each array
// and a native-lock event around each 5 ms wait, and asks for a GC every
// 300 ms, so that the recording has GC phases and safepoints.
public class Shapes {
    @Name("profiler.WallClockSample")
    @Label("Wall Clock Sample")
    static class WallClockSample extends Event {
        @Label("Thread") Thread sampledThread;
        @Label("Thread State") String state;
        @Label("Samples") @Unsigned int samples;
        @Label("Time Span") @Timespan(Timespan.NANOSECONDS) long timeSpan;
    }

    @Name("profiler.LiveObject")
    @Label("Live Object")
    static class LiveObject extends Event {
        @Label("Object Class") Class<?> objectClass;
        @Label("Allocation Size") @DataAmount long allocationSize;
        @Label("Allocation Time") @Timestamp(Timestamp.MILLISECONDS_SINCE_EPOCH) long allocationTime;
    }

    @Name("profiler.Malloc")
    @Label("malloc")
    static class Malloc extends Event {
        @Label("Address") @MemoryAddress long address;
        @Label("Size") @DataAmount long size;
    }

    @Name("profiler.NativeLock")
    @Label("Native Lock Sample")
    static class NativeLock extends Event {
        @Label("Lock Address") @MemoryAddress long address;
    }

    static volatile long sink;
    static final long end = System.nanoTime() + 1_200_000_000L;

    public static void main(String[] args) throws Exception {
        Thread[] ts = {
            new Thread(Shapes::sleeper, "shapes-sleeper"),
            new Thread(Shapes::runner, "shapes-runner"),
            new Thread(Shapes::allocator, "shapes-allocator"),
        };
        for (Thread t : ts) {
            t.start();
        }
        for (Thread t : ts) {
            t.join();
        }
    }

    static void wall(String state, int samples, long span) {
        WallClockSample e = new WallClockSample();
        e.sampledThread = Thread.currentThread();
        e.state = state;
        e.samples = samples;
        e.timeSpan = span;
        e.commit();
    }

    static void sleeper() {
        try {
            while (System.nanoTime() < end) {
                long t0 = System.nanoTime();
                Thread.sleep(20);
                wall("STATE_SLEEPING", 2, System.nanoTime() - t0);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    static void runner() {
        while (System.nanoTime() < end) {
            long x = sink;
            for (int i = 0; i < 2_000_000; i++) {
                x = x * 31 + i;
            }
            sink = x;
            wall("STATE_RUNNABLE", 1, 0);
        }
    }

    static void allocator() {
        List<Object> keep = new ArrayList<>();
        long nextGC = System.nanoTime() + 300_000_000L;
        try {
            while (System.nanoTime() < end) {
                for (int i = 0; i < 10_000; i++) {
                    keep.add(new int[8]);
                }
                byte[] big = new byte[2 << 20];
                keep.add(big);
                live(big);
                lockWait();
                if (keep.size() > 200_000) {
                    keep.clear();
                }
                if (System.nanoTime() > nextGC) {
                    System.gc();
                    nextGC += 300_000_000L;
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    static void live(byte[] big) {
        LiveObject l = new LiveObject();
        l.objectClass = big.getClass();
        l.allocationSize = big.length;
        l.allocationTime = System.currentTimeMillis();
        l.commit();
        Malloc m = new Malloc();
        m.address = System.identityHashCode(big);
        m.size = big.length / 2;
        m.commit();
    }

    static void lockWait() throws InterruptedException {
        NativeLock n = new NativeLock();
        n.begin();
        Thread.sleep(5);
        n.address = 0x1000;
        n.end();
        n.commit();
    }
}
