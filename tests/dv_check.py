"""Checks every deletion vector a Delta table's log names, reading the files
as the Delta protocol describes them ("Deletion Vector Format") with nothing
but the standard library: independent of the writer's code and its crates.

    python tests/dv_check.py TABLE_DIR

For each `add` action with a `deletionVector` stored in a file (storage type
`u`: a z85-encoded UUID after an optional prefix), it reads the file at the
descriptor's offset: the size (4 bytes, big-endian) equals `sizeInBytes`, the
data opens with the magic number 1681511377 (little-endian), the CRC-32 after
the data (big-endian) is the CRC-32 of the data, and the cardinality the
portable Roaring serialisation holds equals the descriptor's. Prints one JSON
object: {"vectors": N, "cardinality": total, "problems": [...]}.
"""

import json
import os
import struct
import sys
import zlib

Z85 = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"
MAGIC = 1681511377


def z85_decode(text):
    """The bytes of a z85 text (a multiple of 5 characters)."""
    out = bytearray()
    for i in range(0, len(text), 5):
        value = 0
        for ch in text[i : i + 5]:
            value = value * 85 + Z85.index(ch)
        out += value.to_bytes(4, "big")
    return bytes(out)


def dv_path(table, descriptor):
    """The file a `u` descriptor names, under the table directory."""
    text = descriptor["pathOrInlineDv"]
    prefix, encoded = text[:-20], text[-20:]
    raw = z85_decode(encoded).hex()
    uuid = f"{raw[:8]}-{raw[8:12]}-{raw[12:16]}-{raw[16:20]}-{raw[20:]}"
    return os.path.join(table, prefix, f"deletion_vector_{uuid}.bin")


def roaring_cardinality(data):
    """Rows a portable 64-bit Roaring treemap holds (the sum of its 32-bit
    bitmaps' container cardinalities, read from their headers)."""
    (buckets,) = struct.unpack_from("<Q", data, 0)
    at, total = 8, 0
    for _ in range(buckets):
        at += 4  # the bucket's high 32 bits
        (cookie,) = struct.unpack_from("<I", data, at)
        if cookie & 0xFFFF == 12347:  # with run containers
            size = (cookie >> 16) + 1
            at += 4 + (size + 7) // 8
        elif cookie == 12346:
            (size,) = struct.unpack_from("<I", data, at + 4)
            at += 8
        else:
            raise ValueError(f"not a portable Roaring bitmap (cookie {cookie})")
        for c in range(size):
            (_, card) = struct.unpack_from("<HH", data, at + 4 * c)
            total += card + 1
        if buckets > 1:
            raise ValueError("more than one bucket: rows beyond 2^32 are not checked here")
    return total


def check(table, descriptor):
    """The descriptor's cardinality and the problems found with its vector."""
    if descriptor["storageType"] != "u":
        return descriptor["cardinality"], [f"storage type {descriptor['storageType']} not checked"]
    with open(dv_path(table, descriptor), "rb") as f:
        content = f.read()
    problems = []
    if content[0] != 1:
        problems.append(f"version byte {content[0]}")
    at = descriptor.get("offset", 1)
    (size,) = struct.unpack_from(">I", content, at)
    data = content[at + 4 : at + 4 + size]
    (crc,) = struct.unpack_from(">I", content, at + 4 + size)
    if size != descriptor["sizeInBytes"]:
        problems.append(f"size {size}, descriptor says {descriptor['sizeInBytes']}")
    if zlib.crc32(data) != crc:
        problems.append(f"CRC-32 {crc:08x} written, {zlib.crc32(data):08x} computed")
    if struct.unpack_from("<I", data, 0)[0] != MAGIC:
        problems.append("wrong magic number")
    cardinality = roaring_cardinality(data[4:])
    if cardinality != descriptor["cardinality"]:
        problems.append(f"{cardinality} rows, descriptor says {descriptor['cardinality']}")
    return cardinality, problems


def main(table):
    log = os.path.join(table, "_delta_log")
    vectors, cardinality, problems = 0, 0, []
    for name in sorted(n for n in os.listdir(log) if n.endswith(".json")):
        with open(os.path.join(log, name)) as f:
            for line in f:
                add = json.loads(line).get("add")
                if not add or not add.get("deletionVector"):
                    continue
                rows, found = check(table, add["deletionVector"])
                vectors += 1
                cardinality += rows
                problems += [f"{name} {add['path']}: {p}" for p in found]
    print(json.dumps({"vectors": vectors, "cardinality": cardinality, "problems": problems}))


if __name__ == "__main__":
    main(sys.argv[1])
    sys.stdout.flush()
    os._exit(0)
