"""Creates the resources of a local deltaload deployment on LocalStack (idempotent).

landing bucket -> s3:ObjectCreated:* -> queue (dead-letter queue after 3 receives);
lake bucket for the Delta tables. Names come from the environment:
DELTALOAD_LANDING_BUCKET (landing), DELTALOAD_LAKE_BUCKET (lake),
DELTALOAD_QUEUE_NAME (deltaload-events), DELTALOAD_MAX_RECEIVE (3).
"""
import json
import os

import boto3

landing = os.environ.get("DELTALOAD_LANDING_BUCKET", "landing")
lake = os.environ.get("DELTALOAD_LAKE_BUCKET", "lake")
queue_name = os.environ.get("DELTALOAD_QUEUE_NAME", "deltaload-events")
max_receive = os.environ.get("DELTALOAD_MAX_RECEIVE", "3")

region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or "us-east-1"
s3 = boto3.client("s3", region_name=region)
sqs = boto3.client("sqs", region_name=region)
for bucket in (landing, lake):
    s3.create_bucket(Bucket=bucket)
s3.put_bucket_versioning(Bucket=landing, VersioningConfiguration={"Status": "Enabled"})

dlq_url = sqs.create_queue(QueueName=f"{queue_name}-dlq",
                           Attributes={"MessageRetentionPeriod": "1209600"})["QueueUrl"]
dlq_arn = sqs.get_queue_attributes(QueueUrl=dlq_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
queue_url = sqs.create_queue(QueueName=queue_name, Attributes={
    "VisibilityTimeout": "30",
    "RedrivePolicy": json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": max_receive}),
})["QueueUrl"]
queue_arn = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
sqs.set_queue_attributes(QueueUrl=queue_url, Attributes={"Policy": json.dumps({
    "Version": "2012-10-17",
    "Statement": [{
        "Effect": "Allow", "Principal": {"Service": "s3.amazonaws.com"},
        "Action": "sqs:SendMessage", "Resource": queue_arn,
        "Condition": {"ArnLike": {"aws:SourceArn": f"arn:aws:s3:::{landing}"}},
    }],
})})
s3.put_bucket_notification_configuration(Bucket=landing, NotificationConfiguration={
    "QueueConfigurations": [{"QueueArn": queue_arn, "Events": ["s3:ObjectCreated:*"]}],
})
print(f"landing s3://{landing}  lake s3://{lake}  queue {queue_url}  dead-letter {dlq_url}")
