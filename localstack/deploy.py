"""Deploys infra/template.yaml to LocalStack through CloudFormation, without the
function (DeployFunction=false: LocalStack's Lambda needs Docker), and prints the
stack's outputs as one JSON object.

usage: deploy.py STACK_NAME [Parameter=Value ...]

An existing stack of that name is left as it is (its outputs are printed), so
`localstack/up` can run again. The endpoint is AWS_ENDPOINT_URL, else LocalStack's
http://127.0.0.1:4566 (never AWS itself); credentials default to LocalStack's.
"""
import json
import os
import sys
import time

import boto3
from botocore.exceptions import ClientError

ATTEMPTS = 3
TEMPLATE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "infra", "template.yaml")


def outputs(stack):
    return {o["OutputKey"]: o["OutputValue"] for o in stack.get("Outputs", [])}


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    name = sys.argv[1]
    params = {"DeployFunction": "false"}
    for arg in sys.argv[2:]:
        key, _, value = arg.partition("=")
        params[key] = value
    region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or "us-east-1"
    cfn = boto3.client(
        "cloudformation",
        region_name=region,
        endpoint_url=os.environ.get("AWS_ENDPOINT_URL", "http://127.0.0.1:4566"),
        aws_access_key_id=os.environ.get("AWS_ACCESS_KEY_ID", "test"),
        aws_secret_access_key=os.environ.get("AWS_SECRET_ACCESS_KEY", "test"),
    )
    try:
        stack = cfn.describe_stacks(StackName=name)["Stacks"][0]
        if stack["StackStatus"].endswith("_COMPLETE") and "ROLLBACK" not in stack["StackStatus"]:
            print(json.dumps(outputs(stack)))
            return
        cfn.delete_stack(StackName=name)
    except ClientError:
        pass
    with open(TEMPLATE) as f:
        body = f.read()
    # SAM checks CodeUri even for a function left out by its condition, and only
    # `sam build`/`sam package` turn the local path into an S3 one: a placeholder
    # stands in for it here. Everything else is the template as shipped.
    local_code = "      CodeUri: ..\n"
    if body.count(local_code) != 1:
        sys.exit(f"{TEMPLATE}: expected one line {local_code!r} (the function's local code path)")
    body = body.replace(local_code, "      CodeUri: s3://deltaload-not-deployed/bootstrap.zip\n")
    # LocalStack's CloudFormation now and then fails a stack under load with no
    # resource to blame (CREATE_FAILED, reason None), and cannot delete a stack of
    # this template: the stack is created again under a new name (NAME-2, ...)
    # with the same parameters, at most ATTEMPTS times in all, each failure
    # reported on stderr. A template that is wrong fails every attempt.
    for attempt in range(1, ATTEMPTS + 1):
        failure = create(cfn, name if attempt == 1 else f"{name}-{attempt}", body, params)
        if failure is None:
            return
        print(f"attempt {attempt} of {ATTEMPTS}: {failure}", file=sys.stderr)
    sys.exit(failure)


def create(cfn, name, body, params):
    """Creates the stack and prints its outputs; else returns why it failed."""
    cfn.create_stack(
        StackName=name,
        TemplateBody=body,
        Parameters=[{"ParameterKey": k, "ParameterValue": v} for k, v in params.items()],
        Capabilities=["CAPABILITY_IAM", "CAPABILITY_AUTO_EXPAND"],
    )
    deadline = time.monotonic() + 300
    while True:
        stack = cfn.describe_stacks(StackName=name)["Stacks"][0]
        status = stack["StackStatus"]
        if status == "CREATE_COMPLETE":
            print(json.dumps(outputs(stack)))
            return None
        if not status.endswith("IN_PROGRESS") or time.monotonic() > deadline:
            events = cfn.describe_stack_events(StackName=name)["StackEvents"]
            reasons = [f'{e["LogicalResourceId"]} {e.get("ResourceStatus")}: {e.get("ResourceStatusReason")}'
                       for e in events if "COMPLETE" not in e.get("ResourceStatus", "")]
            return (f"stack {name} ended {status} ({stack.get('StackStatusReason')}): "
                    + "; ".join(reasons))
        time.sleep(0.2)


if __name__ == "__main__":
    main()
