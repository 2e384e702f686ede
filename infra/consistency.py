#!/usr/bin/env python3
"""Checks that infra/template.yaml's defaults load every object they accept.

An object too large to read whole within the function's memory budget is
spilled to /tmp: about three times its size (the object, its sorted runs; the
lake's `SPILL_FACTOR`). So the default EphemeralStorage must hold three times
the default MaxObjectBytes, and the largest MaxObjectBytes allowed must fit
the largest EphemeralStorage allowed. The function also refuses at run time,
with the reason in the ledger, an object that would not fit: this check keeps
the defaults from refusing what they claim to accept.

  infra/consistency.py [TEMPLATE]
"""
import sys
from pathlib import Path

from cfnlint.decode import cfn_yaml

SPILL_FACTOR = 3
MIB = 1 << 20


def main(argv):
    path = Path(argv[0]) if argv else Path(__file__).resolve().parent / "template.yaml"
    params = cfn_yaml.load(str(path))["Parameters"]
    objects, storage = params["MaxObjectBytes"], params["EphemeralStorage"]
    problems = []
    need = SPILL_FACTOR * int(objects["Default"])
    if need > int(storage["Default"]) * MIB:
        problems.append(
            f"default MaxObjectBytes {objects['Default']} needs {need // MIB} MiB of /tmp, "
            f"default EphemeralStorage is {storage['Default']} MB"
        )
    need = SPILL_FACTOR * int(objects["MaxValue"])
    if need > int(storage["MaxValue"]) * MIB:
        problems.append(
            f"MaxObjectBytes may be {objects['MaxValue']}, which needs {need // MIB} MiB of /tmp, "
            f"more than EphemeralStorage's maximum {storage['MaxValue']} MB"
        )
    memory = params["FunctionMemory"]
    if int(memory["Default"]) < 512:
        problems.append(f"default FunctionMemory {memory['Default']} MB leaves a load too small a budget")
    for p in problems:
        print(f"infra/template.yaml: {p}", file=sys.stderr)
    if problems:
        return 1
    print(f"template consistent: MaxObjectBytes {objects['Default']} x {SPILL_FACTOR} fits EphemeralStorage "
          f"{storage['Default']} MB; the largest allowed objects fit the largest /tmp")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
