//! Why a request to a forge's API failed ([`ApiError`]): a read, a download or a write. No
//! error holds the token: server text is redacted ([`super::token`]) before it is put in one.

/// Why a request to a forge's API (or a download it redirected to) failed. None of these holds
/// the token.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error("{0}")]
    Config(String),
    /// 403/404 on a write (or on reading the comments): the token may not write here, as
    /// on a pull request from a fork.
    #[error("{method} {path}: HTTP {status}: {message}")]
    NoAccess {
        method: String,
        path: String,
        status: u16,
        message: String,
    },
    #[error("{method} {path}: HTTP {status}: {message}")]
    Status {
        method: String,
        path: String,
        status: u16,
        message: String,
    },
    /// A body the forge refused as too long (its dialect says how: GitHub's 422, GitLab's
    /// 400): the body must shrink.
    #[error("{method} {path}: HTTP {status}: {message}")]
    TooLong {
        method: String,
        path: String,
        status: u16,
        message: String,
    },
    /// `last` names the request.
    #[error("gave up after {tries} tries: {last}")]
    GaveUp { tries: u32, last: String },
    /// A wait the post time limit has no room for.
    #[error("{0}")]
    OutOfTime(String),
    #[error("{method} {path}: unexpected response: {message}")]
    Response {
        method: String,
        path: String,
        message: String,
    },
}

impl ApiError {
    /// True for a token that cannot write here (a fork's pull request).
    pub fn is_no_access(&self) -> bool {
        matches!(self, ApiError::NoAccess { .. })
    }
}
