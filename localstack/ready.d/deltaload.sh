#!/bin/bash
# LocalStack ready hook (docker-compose.yml): deploys infra/template.yaml without
# the function, as localstack/up does.
AWS_ENDPOINT_URL=http://localhost:4566 AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test \
  AWS_DEFAULT_REGION=us-east-1 /opt/code/localstack/.venv/bin/python /opt/deltaload/localstack/deploy.py \
  deltaload LandingBucketName=landing MaxReceiveCount=3 VisibilityTimeoutWithoutFunction=30
