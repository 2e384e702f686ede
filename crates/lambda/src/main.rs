//! The `bootstrap` binary of the Lambda function; everything lives in the library.

// The Delta futures are deep; the default limit is too low for their layout.
#![recursion_limit = "256"]

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    deltaload_lambda::run().await
}
