//! A forge's side of the history ([`nsys_gate_compare::history::Archives`]) that every forge shares: the
//! stage's deadline, read from the API's client, and an artifact downloaded with it.

use std::time::Duration;

use super::http::{ApiError, Client};
use nsys_gate_compare::history::Download;

/// What is left of the client's deadline.
pub fn time_left(client: &Client) -> Duration {
    client.config().deadline.left()
}

/// The client's deadline in words.
pub fn time_limit(client: &Client) -> String {
    client.config().deadline.describe()
}

/// The artifact at `url`, at most `max` bytes, into `file` (a redirect followed once without
/// the token, [`Client::download`]); its deadline's end is [`Download::Late`], a 410 on the
/// artifact itself [`Download::Expired`].
pub async fn download(
    client: &Client,
    url: &str,
    max: u64,
    file: &mut std::fs::File,
) -> Result<(), Download> {
    match client.download(url, max, file).await {
        Ok(_) => Ok(()),
        Err(ApiError::OutOfTime(_)) => Err(Download::Late),
        Err(ApiError::Status {
            status: 410,
            message,
            ..
        }) => Err(Download::Expired(message)),
        Err(e) => Err(Download::Failed(e.to_string())),
    }
}
