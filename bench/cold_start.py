"""Cold start of the Lambda binary, measured locally against a stand-in for the
Lambda runtime API (the HTTP interface `lambda_runtime` polls).

For each run: start `bootstrap` as Lambda would (AWS_LAMBDA_RUNTIME_API and the
AWS_LAMBDA_* variables set), and time
  ready:  process start -> its first GET .../invocation/next (init done),
  first:  process start -> the response to the first event,
then stop it. The event is an SQS batch with one S3 notification (--key) or,
without --key, an empty batch (Records: []), which times init alone plus the
runtime round trip.

usage: cold_start.py --bootstrap target/release/bootstrap [--runs 7]
         [--env NAME=VALUE ...] [--bucket B --key K] [--history N --bin deltaload]

--history N first loads N small change files, one `deltaload load` each (with
the same --env), into the lake, as a lake in service has: opening a table reads
its last checkpoint and every commit after it. 27 loads leave `orders` and
`reconciliation` 8 commits past their last checkpoint (every 10th commit writes one).
The deltaload settings (DELTALOAD_LAKE, DELTALOAD_SOURCES, AWS_ENDPOINT_URL, ...)
come from --env; the rest of this process's environment is not passed on.
"""
import argparse
import http.server
import json
import os
import statistics
import subprocess
import sys
import threading
import time


class Runtime(http.server.BaseHTTPRequestHandler):
    """The runtime API for one process: one event, then holds the next poll."""

    event = b"{}"
    ready = None
    responded = None
    error = None
    served = False
    done = threading.Event()

    def log_message(self, *args):
        pass

    def do_GET(self):
        cls = type(self)
        if not self.path.endswith("/runtime/invocation/next"):
            self.send_error(404)
            return
        now = time.perf_counter()
        if cls.ready is None:
            cls.ready = now
        if cls.served:
            # The next poll after the first event: hold it until the run ends.
            cls.done.wait(30)
            try:
                self.send_error(503)
            except OSError:
                pass  # the process was stopped first
            return
        cls.served = True
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Lambda-Runtime-Aws-Request-Id", "req-1")
        self.send_header("Lambda-Runtime-Deadline-Ms", str(int(time.time() * 1000) + 900_000))
        self.send_header("Lambda-Runtime-Invoked-Function-Arn",
                         "arn:aws:lambda:us-east-1:000000000000:function:deltaload")
        self.send_header("Lambda-Runtime-Trace-Id", "Root=1-00000000-000000000000000000000000")
        self.send_header("Content-Length", str(len(cls.event)))
        self.end_headers()
        self.wfile.write(cls.event)

    def do_POST(self):
        cls = type(self)
        length = int(self.headers.get("Content-Length", 0))
        body = self.rfile.read(length)
        if self.path.endswith("/response"):
            cls.responded = (time.perf_counter(), body)
        else:
            cls.error = (self.path, body)
        self.send_response(202)
        self.send_header("Content-Length", "0")
        self.end_headers()
        cls.done.set()


def event(bucket, key):
    if key is None:
        return {"Records": []}
    body = {"Records": [{"eventName": "ObjectCreated:Put",
                         "s3": {"bucket": {"name": bucket}, "object": {"key": key}}}]}
    return {"Records": [{"messageId": "m1", "receiptHandle": "r1", "body": json.dumps(body),
                         "attributes": {}, "messageAttributes": {}, "md5OfBody": "",
                         "eventSource": "aws:sqs", "eventSourceARN": "arn:aws:sqs:us-east-1:000000000000:q",
                         "awsRegion": "us-east-1"}]}


def run_once(bootstrap, env, payload):
    Runtime.event = json.dumps(payload).encode()
    Runtime.ready = Runtime.responded = Runtime.error = None
    Runtime.served = False
    Runtime.done = threading.Event()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Runtime)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    full = {
        "PATH": os.environ.get("PATH", ""),
        "AWS_LAMBDA_RUNTIME_API": f"127.0.0.1:{server.server_address[1]}",
        "AWS_LAMBDA_FUNCTION_NAME": "deltaload",
        "AWS_LAMBDA_FUNCTION_VERSION": "$LATEST",
        "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "1024",
        "AWS_LAMBDA_LOG_GROUP_NAME": "/aws/lambda/deltaload",
        "AWS_LAMBDA_LOG_STREAM_NAME": "local",
        "AWS_REGION": "us-east-1",
        **env,
    }
    start = time.perf_counter()
    proc = subprocess.Popen([bootstrap], env=full, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    Runtime.done.wait(120)
    proc.kill()
    out, err = proc.communicate()
    server.shutdown()
    if Runtime.error or Runtime.ready is None or Runtime.responded is None:
        sys.exit(f"run failed: error={Runtime.error} ready={Runtime.ready}\n{err.decode()[-2000:]}")
    response = json.loads(Runtime.responded[1] or b"{}")
    if response.get("batchItemFailures"):
        sys.exit(f"the event failed: {response}\n{out.decode()[-2000:]}{err.decode()[-2000:]}")
    return (Runtime.ready - start) * 1000, (Runtime.responded[0] - start) * 1000


def history(bin_, env, n):
    """Loads n one-order change files into the lake named by env, one process each."""
    import tempfile
    full = {"PATH": os.environ.get("PATH", ""), **env}
    with tempfile.TemporaryDirectory() as d:
        for i in range(n):
            path = os.path.join(d, f"history-{i:04}.csv")
            with open(path, "w") as f:
                f.write("order_id,customer_id,status,amount,currency,ordered_at,updated_at\n")
                f.write(f"{i + 1},C{i:06},placed,{i}.50,EUR,2026-10-01T00:00:00,2026-10-01T00:{i % 60:02}:00\n")
            proc = subprocess.run([bin_, "load", "--lake", env["DELTALOAD_LAKE"], path], env=full,
                                  capture_output=True, text=True)
            if proc.returncode != 0:
                sys.exit(f"loading the history failed (exit {proc.returncode}): {proc.stderr[-2000:]}")
    print(f"history: {n} files loaded, one process each", flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bootstrap", required=True)
    p.add_argument("--runs", type=int, default=7)
    p.add_argument("--env", action="append", default=[], help="NAME=VALUE for the process")
    p.add_argument("--bucket")
    p.add_argument("--key", help="announce this object in the first event")
    p.add_argument("--history", type=int, default=0, help="small files to load into the lake first")
    p.add_argument("--bin", help="the deltaload binary, for --history")
    a = p.parse_args()
    env = dict(e.split("=", 1) for e in a.env)
    if a.history:
        if not a.bin or "DELTALOAD_LAKE" not in env:
            sys.exit("--history needs --bin and --env DELTALOAD_LAKE=...")
        history(a.bin, env, a.history)
    ready, first = [], []
    for _ in range(a.runs):
        r, f = run_once(a.bootstrap, env, event(a.bucket, a.key))
        ready.append(r)
        first.append(f)
    size = os.path.getsize(a.bootstrap)
    print(f"{a.bootstrap} ({size / 2**20:.1f} MiB), {a.runs} runs")
    print(f"ready for the first event: median {statistics.median(ready):.1f} ms "
          f"(min {min(ready):.1f}, max {max(ready):.1f})")
    what = f"s3://{a.bucket}/{a.key}" if a.key else "an empty batch"
    print(f"first response ({what}): median {statistics.median(first):.1f} ms "
          f"(min {min(first):.1f}, max {max(first):.1f})")


if __name__ == "__main__":
    main()
