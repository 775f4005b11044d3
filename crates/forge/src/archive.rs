//! A forge's side of the history ([`nsys_gate_compare::history::Archives`]) that every forge
//! shares: the stage's deadline, read from the API's client, and an artifact downloaded with
//! it ([`Hosted`]). What differs between forges is how a run's artifact is found ([`Locate`]).

use std::time::Duration;

use super::http::{ApiError, Client};
use nsys_gate_compare::history::{Archives, Doing, Download, ListedRun, Located};

/// How a forge finds a listed run's artifact, asking its API with `client`.
pub trait Locate {
    async fn locate(&self, client: &Client, run: &ListedRun, doing: &Doing) -> Located;
}

/// A forge's history archives: found by `locate`, downloaded with `client`, within its deadline.
pub struct Hosted<'a, L> {
    pub client: &'a Client,
    pub locate: L,
}

impl<L: Locate> Archives for Hosted<'_, L> {
    fn time_left(&self) -> Duration {
        self.client.config().deadline.left()
    }

    fn time_limit(&self) -> String {
        self.client.config().deadline.describe()
    }

    async fn locate(&self, run: &ListedRun, doing: &Doing) -> Located {
        self.locate.locate(self.client, run, doing).await
    }

    async fn download(
        &self,
        url: &str,
        max: u64,
        file: &mut std::fs::File,
    ) -> Result<(), Download> {
        download(self.client, url, max, file).await
    }
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
