//! The Lambda function's `bootstrap`, built in the suite's profile, for the
//! end-to-end test that runs it under cargo-lambda's emulator.

// The Delta futures are deep; the default limit is too low for their layout.
#![recursion_limit = "256"]

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    deltaload_lambda::run().await
}
