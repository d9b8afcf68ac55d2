# The pstats tests record this with python3 -m cProfile -o OUT locks.py HOLD:
# a thread holds a threading.Lock for HOLD seconds while the main thread
# (the one cProfile profiles) waits to acquire it, then the main thread
# sleeps HOLD seconds. `ready` hands over deterministically: the main
# thread blocks on it until the holder has the lock. It prints the seconds
# the main thread measured waiting on the two locks, and sleeping.
import sys
import threading
import time

HOLD = float(sys.argv[1])
lock = threading.Lock()
ready = threading.Lock()


def holder():
    with lock:
        ready.release()
        time.sleep(HOLD)


def main():
    ready.acquire()
    t = threading.Thread(target=holder)
    t.start()
    t0 = time.perf_counter()
    ready.acquire()
    lock.acquire()
    t1 = time.perf_counter()
    lock.release()
    time.sleep(HOLD)
    t2 = time.perf_counter()
    t.join()
    print(f"{t1 - t0:.6f} {t2 - t1:.6f}")


main()
