//! The `bootstrap` binary of the Lambda function; everything lives in the library.

// The Delta futures are deep; the default limit is too low for their layout.
#![recursion_limit = "256"]

fn main() -> Result<(), lambda_runtime::Error> {
    // Before any thread allocates: see its docs.
    deltaload_aws::cap_allocator_arenas();
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?
        .block_on(deltaload_lambda::run())
}
