# The pstats tests record this with python3 -m cProfile -o OUT io.py WAIT:
# the main thread (the one cProfile profiles) waits in select.select, then
# in a selectors selector, for data another thread sends WAIT seconds
# later each time, and receives it with socket.recv.
import select
import selectors
import socket
import sys
import threading
import time

WAIT = float(sys.argv[1])
a, b = socket.socketpair()


def sender():
    for _ in range(2):
        time.sleep(WAIT)
        b.send(b"x")


def main():
    t = threading.Thread(target=sender)
    t.start()
    select.select([a], [], [])
    a.recv(1)
    sel = selectors.DefaultSelector()
    sel.register(a, selectors.EVENT_READ)
    sel.select()
    a.recv(1)
    t.join()


main()
