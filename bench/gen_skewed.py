#!/usr/bin/env python3
"""Deterministic order-change files whose updates fall on recent orders.

The shared generator (../shared/bench/gen_changes.py) picks the order of each
update uniformly from the whole book. Real changes follow the order's life:
paid, shipped, delivered within days of being placed. Here the order an update
touches is drawn by age: `age ~ Exponential(mean = --recent-mean orders)`
counted back from the newest order, so with the default 20,000 (about two days
at one order every ten seconds) 99.9% of updates hit the newest 140,000 orders,
whatever the size of the book.

  gen_skewed.py --orders K --files N --rows R [--chunk C] [--seed S] --out DIR

writes
  initial-0001.csv ..  the K book orders ('placed'), C rows per file in id order
                       (load them one by one to build a K-order table)
  changes-0001.csv ..  N files of R rows, the same row mix as gen_changes.py:
                       0.5% unparseable, 3% repeats, 3.5% late re-sends,
                       70% updates (skewed as above), 23% new orders

The random draws do not depend on K: the same seed writes the same rows for
any book size (same kinds, same ages of the orders touched), with ids shifted
by the difference in K. Order fields
are functions of the order's index, so a 20,000,000-order book needs no memory
beyond the orders the changes touch.
"""
import argparse
import datetime as dt
import os
import random

HEADER = "order_id,customer_id,status,amount,currency,ordered_at,updated_at"
STATUSES = ["placed", "paid", "shipped", "delivered", "cancelled", "returned"]
NEXT = {0: (1, 4, 0.8), 1: (2, 4, 0.9), 2: (3, 3, 1.0), 3: (5, 3, 0.1)}
CURRENCIES = ["EUR", "EUR", "EUR", "USD", "USD", "GBP"]
BASE_ID = 1_000_000
EPOCH = dt.datetime(2026, 10, 1)
ORDER_EVERY_S = 10          # book orders were placed one every 10 s before EPOCH
_days = {}


def ts(sec):
    day, rem = divmod(sec, 86400)
    d = _days.get(day)
    if d is None:
        d = _days[day] = (EPOCH + dt.timedelta(days=day)).strftime("%Y-%m-%d")
    h, rem = divmod(rem, 3600)
    m, s = divmod(rem, 60)
    return "%sT%02d:%02d:%02d" % (d, h, m, s)


class Book:
    def __init__(self, orders):
        self.base = orders          # book orders: index 0..orders-1
        self.n = orders
        self.placed = {}            # index -> ordered_at, for orders placed in the window
        self.state = {}             # index -> (status, updated, previous status, previous updated)

    def ordered(self, i):
        return self.placed.get(i, (i - self.base) * ORDER_EVERY_S)

    def row(self, i, status=None, updated=None):
        st, up = self.state.get(i, (0, self.ordered(i), None, None))[:2]
        status = st if status is None else status
        updated = up if updated is None else updated
        a = 100 + (i * 104729) % 49900
        return "%d,C%06d,%s,%d.%02d,%s,%s,%s" % (
            BASE_ID + 1 + i, (i * 7919) % 250000, STATUSES[status], a // 100, a % 100,
            CURRENCIES[(i * 31) % 6], ts(self.ordered(i)), ts(updated))

    def advance(self, i, now, r):
        st, up, _, _ = self.state.get(i, (0, self.ordered(i), None, None))
        nxt, other, p = NEXT.get(st, (st, st, 1.0))
        ns = nxt if r < p else other
        self.state[i] = (ns, max(now, up + 1), st, up)

    def previous(self, i):
        st = self.state.get(i)
        return None if st is None or st[2] is None else self.row(i, st[2], st[3])

    def recent(self, rng, mean):
        return max(0, self.n - 1 - int(rng.expovariate(1.0 / mean)))


def corrupt(rng, line):
    f = line.split(",")
    kind = rng.randrange(4)
    if kind == 0:
        f[3] = "abc"
    elif kind == 1:
        f[6] = "2026-13-01T10:00:00"
    elif kind == 2:
        f = f[:-1]
    else:
        f[0] = "ORD" + f[0]
    return ",".join(f)


def write(path, rows):
    with open(path, "w", newline="") as f:
        f.write(HEADER + "\n")
        f.write("\n".join(rows) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--orders", type=int, required=True)
    ap.add_argument("--files", type=int, default=5)
    ap.add_argument("--rows", type=int, default=50_000)
    ap.add_argument("--chunk", type=int, default=250_000)
    ap.add_argument("--recent-mean", type=int, default=20_000)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    book = Book(args.orders)
    for c, start in enumerate(range(0, args.orders, args.chunk)):
        rows = [book.row(i) for i in range(start, min(args.orders, start + args.chunk))]
        write(os.path.join(args.out, "initial-%04d.csv" % (c + 1)), rows)
    rng = random.Random(args.seed)
    recent, late = [], []
    span = 3600
    for fno in range(args.files):
        rows = []
        for j in range(args.rows):
            now = fno * span + (j * span) // args.rows
            r = rng.random()
            if r < 0.005:
                rows.append(corrupt(rng, book.row(book.recent(rng, args.recent_mean))))
            elif r < 0.035 and recent:
                rows.append(recent[rng.randrange(len(recent))])
            elif r < 0.07 and late:
                rows.append(book.previous(late[rng.randrange(len(late))]))
            elif r < 0.77:
                i = book.recent(rng, args.recent_mean)
                book.advance(i, now, rng.random())
                late.append(i)
                del late[:-5000]
                rows.append(book.row(i))
            else:
                i = book.n
                book.n += 1
                book.placed[i] = now
                rows.append(book.row(i))
            if r >= 0.07:
                recent.append(rows[-1])
                del recent[:-5000]
        write(os.path.join(args.out, "changes-%04d.csv" % (fno + 1)), rows)


if __name__ == "__main__":
    main()
