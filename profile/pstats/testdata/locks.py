# The pstats tests record this with python3 -m cProfile -o OUT locks.py HOLD:
# a thread holds a threading.Lock for HOLD seconds while the main thread
# (the one cProfile profiles) waits to acquire it, then the main thread
# sleeps HOLD seconds. `ready` hands over deterministically: the main
# thread blocks on it until the holder has the lock.
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
    ready.acquire()
    lock.acquire()
    lock.release()
    time.sleep(HOLD)
    t.join()


main()
