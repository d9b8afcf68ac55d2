import java.util.concurrent.locks.LockSupport;

// Holders is the program profdiff's who-waited JFR test records: a thread
// named "holder" holds monitors in holdSlow, spinning for a known time
// (busy.hold ms, 40 by default) each round, while the waiters block to
// enter them in waitHere. Each waiter has a monitor of its own, which
// holdSlow takes with the others: so every waiter's enter follows the
// holder's exit (with one shared monitor the waiters would follow each
// other). After each round the holder notifies "sleeper", waiting in
// waitForBell; "napper" waits 15 ms at a time in waitTimed and is never
// notified (its waits time out); "parker" parks 15 ms at a time in
// parkHere on a Bell. It prints the holder's Java thread id.
public class Holders {
    static final int waiters = 3;
    static final Object[] monitors = new Object[waiters];
    static final Object bell = new Object();
    static final Object quiet = new Object();
    static final Bell parkedOn = new Bell();
    static final long holdNanos = Long.getLong("busy.hold", 40) * 1_000_000L;
    static final int rounds = Integer.getInteger("busy.rounds", 10);
    static volatile boolean done;
    static volatile long sink;

    static final class Bell {}

    public static void main(String[] args) throws InterruptedException {
        for (int i = 0; i < waiters; i++) {
            monitors[i] = new Object();
        }
        Thread holder = new Thread(Holders::hold, "holder");
        System.out.println("holder " + holder.getId());
        Thread[] others = new Thread[waiters + 3];
        for (int i = 0; i < waiters; i++) {
            int w = i;
            others[i] = new Thread(() -> { while (!done) { waitHere(w); spin(200_000); } }, "waiter-" + i);
        }
        others[waiters] = new Thread(() -> { while (!done) waitForBell(); }, "sleeper");
        others[waiters + 1] = new Thread(() -> { while (!done) waitTimed(); }, "napper");
        others[waiters + 2] = new Thread(() -> { while (!done) parkHere(); }, "parker");
        holder.start();
        for (Thread t : others) {
            t.start();
        }
        holder.join();
        synchronized (bell) {
            bell.notifyAll(); // the sleeper's last wait
        }
        for (Thread t : others) {
            t.join();
        }
    }

    static void hold() {
        spin(20_000_000); // let the others start and block
        for (int r = 0; r < rounds; r++) {
            holdSlow(0);
            ring();
            spin(1_000_000);
        }
        done = true;
    }

    // holdSlow takes monitors i and up, nested, and spins holding them all.
    static void holdSlow(int i) {
        if (i == waiters) {
            spin(holdNanos);
            return;
        }
        synchronized (monitors[i]) {
            holdSlow(i + 1);
        }
    }

    static void ring() {
        synchronized (bell) {
            bell.notifyAll();
        }
    }

    static void waitHere(int i) {
        synchronized (monitors[i]) {
            sink++;
        }
    }

    static void waitForBell() {
        synchronized (bell) {
            try {
                if (!done) {
                    bell.wait();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    static void waitTimed() {
        synchronized (quiet) {
            try {
                quiet.wait(15);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    static void parkHere() {
        LockSupport.parkNanos(parkedOn, 15_000_000L);
    }

    static void spin(long nanos) {
        long end = System.nanoTime() + nanos;
        while (System.nanoTime() < end) {
            sink++;
        }
    }
}
