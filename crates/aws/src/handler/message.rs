//! One SQS message, and its failure: a panic settled into its error, the
//! error logged; the messages to deliver again, as Lambda expects them.

use crate::error::AwsError;
use crate::report::BatchReport;
use aws_lambda_events::event::sqs::{BatchItemFailure, SqsBatchResponse};

/// One SQS message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    /// The SQS message id.
    pub id: String,
    /// Its body.
    pub body: String,
}

/// Logs a message's failure: what failed in a line at ERROR, the error's full
/// structure (the SDK's, for S3) at DEBUG only.
pub(crate) fn failed(e: &AwsError) {
    tracing::error!(error = %e, "message failed, it will be delivered again");
    tracing::debug!(error = ?e, "the failure in full");
}

/// A panic becomes an error of its message.
pub(crate) fn settle<T>(
    outcome: Result<Result<T, AwsError>, Box<dyn std::any::Any + Send>>,
) -> Result<T, AwsError> {
    outcome.unwrap_or_else(|_| Err(AwsError::Panicked))
}

/// The response Lambda expects: the messages to deliver again.
pub fn batch_response(report: BatchReport) -> SqsBatchResponse {
    let mut response = SqsBatchResponse::default();
    response.batch_item_failures = report
        .failures
        .into_iter()
        .map(|id| {
            let mut failure = BatchItemFailure::default();
            failure.item_identifier = id;
            failure
        })
        .collect();
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_is_its_message_error_and_a_result_passes_through() {
        let panicked: Result<Result<u8, AwsError>, _> = std::panic::catch_unwind(|| panic!("bug"));
        assert!(matches!(settle(panicked), Err(AwsError::Panicked)));
        assert_eq!(settle::<u8>(Ok(Ok(3))).ok(), Some(3));
    }
}
